import type { WebhookSubscriptionRepository } from '../../src/application/ports/WebhookSubscriptionRepository.js';
import type { WebhookSubscription } from '../../src/domain/webhook/WebhookSubscription.js';

export interface SubscriptionRepositorySubject {
  repo: WebhookSubscriptionRepository;
  cleanup?: () => Promise<void>;
}

/** A subscription named `name` with every field set; `overrides` replace fields. */
export function aSubscription(name: string, overrides: Partial<WebhookSubscription> = {}): WebhookSubscription {
  return {
    name,
    events: ['payment_intent.succeeded'],
    prompt: 'Payment {data.object.id} succeeded',
    skills: ['billing'],
    deliver: 'telegram',
    deliverChatId: '-1001234',
    secret: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA',
    createdAt: '2026-06-01T08:00:00.000Z',
    updatedAt: '2026-06-01T08:00:00.000Z',
    ...overrides,
  };
}

const put = (subscription: WebhookSubscription) => () => ({ next: subscription, result: undefined });

/** What every WebhookSubscriptionRepository promises; each test gets a fresh, empty store. */
export function describeSubscriptionRepositoryContract(name: string, makeSubject: () => Promise<SubscriptionRepositorySubject>): void {
  describe(`${name} (WebhookSubscriptionRepository contract)`, () => {
    let subject: SubscriptionRepositorySubject;
    let repo: WebhookSubscriptionRepository;

    beforeEach(async () => {
      subject = await makeSubject();
      repo = subject.repo;
    });

    afterEach(async () => {
      await subject.cleanup?.();
    });

    it('loads nothing from a store nobody has written', async () => {
      expect(await repo.load()).toEqual({ subscriptions: [], problems: [] });
    });

    it('keeps a subscription field for field, also one without optional parts', async () => {
      const full = aSubscription('payments');
      const bare = aSubscription('bare', { events: [], prompt: null, skills: [], deliver: 'log', deliverChatId: null });
      await repo.update('payments', put(full));
      await repo.update('bare', put(bare));

      expect((await repo.load()).subscriptions).toEqual([bare, full]);
    });

    it('hands the change the stored subscription, and answers what the change answered', async () => {
      await repo.update('payments', put(aSubscription('payments')));

      const seen = await repo.update('payments', (current) => ({ next: current, result: current?.secret }));

      expect(seen).toBe(aSubscription('payments').secret);
    });

    it('replaces a subscription and removes one changed to null', async () => {
      await repo.update('a', put(aSubscription('a')));
      await repo.update('b', put(aSubscription('b')));

      await repo.update('a', put(aSubscription('a', { prompt: 'changed' })));
      await repo.update('b', () => ({ next: null, result: undefined }));

      expect((await repo.load()).subscriptions).toEqual([aSubscription('a', { prompt: 'changed' })]);
    });

    it('writes nothing when the change throws, and passes its error on', async () => {
      await repo.update('a', put(aSubscription('a')));

      await expect(
        repo.update('a', () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');

      expect((await repo.load()).subscriptions).toEqual([aSubscription('a')]);
    });

    it('loses none of many updates made at the same time', async () => {
      const names = Array.from({ length: 12 }, (_, index) => `sub-${String(index).padStart(2, '0')}`);

      await Promise.all(names.map((each) => repo.update(each, put(aSubscription(each)))));

      expect((await repo.load()).subscriptions.map((subscription) => subscription.name)).toEqual(names);
    });
  });
}
