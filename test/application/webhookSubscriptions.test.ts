import { ListWebhooks } from '../../src/application/webhook/subscriptions/ListWebhooks.js';
import { RemoveWebhookSubscription } from '../../src/application/webhook/subscriptions/RemoveWebhookSubscription.js';
import { SubscribeWebhook } from '../../src/application/webhook/subscriptions/SubscribeWebhook.js';
import { TEST_EVENT, TestWebhookSubscription } from '../../src/application/webhook/subscriptions/TestWebhookSubscription.js';
import { FakeWebhookRoutes, aRoute } from '../support/fakes/FakeWebhookRoutes.js';
import { InMemorySubscriptionRepository } from '../support/fakes/InMemorySubscriptionRepository.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingWebhookClient, SequentialSecrets } from '../support/fakes/RecordingWebhookClient.js';

/** The subscription use cases over one store, with a config.yaml route named `github`. */
function subscriptions() {
  const repository = new InMemorySubscriptionRepository();
  const routes = new FakeWebhookRoutes([aRoute('github')], repository);
  const clock = new ManualClock('2026-06-01T08:00:00Z');
  const client = new RecordingWebhookClient();
  return {
    repository,
    clock,
    client,
    subscribe: new SubscribeWebhook(repository, routes, new SequentialSecrets(), clock),
    list: new ListWebhooks(routes),
    remove: new RemoveWebhookSubscription(repository, routes),
    test: new TestWebhookSubscription(repository, routes, client, clock),
  };
}

describe('agent webhook subscribe', () => {
  it('stores a subscription with its options and a generated secret', async () => {
    const s = subscriptions();

    const { subscription, created } = await s.subscribe.execute({
      name: 'payments',
      events: ['payment_intent.succeeded', ' charge.dispute.created '],
      prompt: 'Payment {data.object.id}',
      skills: ['billing'],
      deliver: 'telegram',
      deliverChatId: '-1001234',
    });

    expect(created).toBe(true);
    expect(subscription).toEqual({
      name: 'payments',
      events: ['payment_intent.succeeded', 'charge.dispute.created'],
      prompt: 'Payment {data.object.id}',
      skills: ['billing'],
      deliver: 'telegram',
      deliverChatId: '-1001234',
      secret: 'secret-1',
      createdAt: '2026-06-01T08:00:00.000Z',
      updatedAt: '2026-06-01T08:00:00.000Z',
    });
    expect(s.repository.get('payments')).toEqual(subscription);
  });

  it('delivers to the log with every event and the default prompt when given only a name', async () => {
    const s = subscriptions();

    const { subscription } = await s.subscribe.execute({ name: 'alerts' });

    expect(subscription).toMatchObject({ events: [], prompt: null, skills: [], deliver: 'log', deliverChatId: null });
  });

  it('takes a name with upper case, "-" and "_", and one of 64 characters, as config.yaml routes do', async () => {
    const s = subscriptions();

    await s.subscribe.execute({ name: 'Deploy_Hook-2' });
    await s.subscribe.execute({ name: 'p'.repeat(64) });

    expect(s.repository.get('Deploy_Hook-2')).toBeDefined();
    expect(s.repository.get('p'.repeat(64))).toBeDefined();
  });

  it('keeps the secret and the creation time when the subscription is replaced without --secret', async () => {
    const s = subscriptions();
    await s.subscribe.execute({ name: 'payments', events: ['a'] });
    s.clock.advance(60_000);

    const { subscription, created } = await s.subscribe.execute({ name: 'payments', events: ['b'] });

    expect(created).toBe(false);
    expect(subscription).toMatchObject({
      events: ['b'],
      secret: 'secret-1',
      createdAt: '2026-06-01T08:00:00.000Z',
      updatedAt: '2026-06-01T08:01:00.000Z',
    });
  });

  it('takes the secret given with --secret, also when replacing', async () => {
    const s = subscriptions();
    await s.subscribe.execute({ name: 'payments' });

    const { subscription } = await s.subscribe.execute({ name: 'payments', secret: 'whsec_from_stripe' });

    expect(subscription.secret).toBe('whsec_from_stripe');
  });

  it.each([
    ['a name starting with a dash', { name: '-payments' }, 'WEBHOOK.NAME_INVALID'],
    ['a name with a slash', { name: 'a/b' }, 'WEBHOOK.NAME_INVALID'],
    ['the parent directory as a name', { name: '..' }, 'WEBHOOK.NAME_INVALID'],
    ['a name of 65 characters', { name: 'p'.repeat(65) }, 'WEBHOOK.NAME_INVALID'],
    ['a delivery that is not allowed', { name: 'p', deliver: 'pigeon' }, 'WEBHOOK.DELIVER_INVALID'],
    ['a chat id for the log', { name: 'p', deliver: 'log', deliverChatId: '42' }, 'WEBHOOK.DELIVER_INVALID'],
    ['a chat id the platform does not take', { name: 'p', deliver: 'telegram', deliverChatId: 'not a chat' }, 'DELIVERY.INVALID'],
    ['INSECURE_NO_AUTH as the secret', { name: 'p', secret: 'INSECURE_NO_AUTH' }, 'WEBHOOK.SECRET_INVALID'],
    ['an empty secret', { name: 'p', secret: ' ' }, 'WEBHOOK.SECRET_INVALID'],
    ['the name of a config.yaml route', { name: 'github' }, 'WEBHOOK.NAME_TAKEN'],
  ])('refuses %s and stores nothing', async (_case, input, code) => {
    const s = subscriptions();

    await expect(s.subscribe.execute(input)).rejects.toMatchObject({ code });

    expect(s.repository.writes).toBe(0);
  });
});

describe('agent webhook list and remove', () => {
  it('lists config routes first, then subscriptions', async () => {
    const s = subscriptions();
    await s.subscribe.execute({ name: 'payments' });

    expect((await s.list.execute()).routes.map((route) => [route.name, route.source])).toEqual([
      ['github', 'config'],
      ['payments', 'subscription'],
    ]);
  });

  it('removes a subscription and returns it', async () => {
    const s = subscriptions();
    await s.subscribe.execute({ name: 'payments' });

    expect((await s.remove.execute({ name: 'payments' })).name).toBe('payments');
    expect(s.repository.get('payments')).toBeUndefined();
  });

  it('says so when there is no such subscription', async () => {
    await expect(subscriptions().remove.execute({ name: 'nothing' })).rejects.toMatchObject({
      code: 'WEBHOOK.NOT_FOUND',
      message: 'No webhook subscription is named "nothing"; see "agent webhook list".',
    });
  });

  it('refuses to remove a config.yaml route', async () => {
    await expect(subscriptions().remove.execute({ name: 'github' })).rejects.toMatchObject({ code: 'WEBHOOK.CONFIG_ROUTE' });
  });
});

describe('agent webhook test', () => {
  it('sends a signed sample payload with event "test" and returns the answer', async () => {
    const s = subscriptions();
    await s.subscribe.execute({ name: 'payments' });

    const result = await s.test.execute({ name: 'payments' });

    expect(s.client.sent).toEqual([
      {
        route: 'payments',
        event: TEST_EVENT,
        secret: 'secret-1',
        payload: {
          event: 'test',
          subscription: 'payments',
          message: 'A test delivery sent by "agent webhook test".',
          sent_at: '2026-06-01T08:00:00.000Z',
        },
      },
    ]);
    expect(result).toMatchObject({ status: 202, body: '{"status":"accepted"}', url: 'http://127.0.0.1:8644/webhooks/payments' });
  });

  it('sends the payload given instead of the sample', async () => {
    const s = subscriptions();
    await s.subscribe.execute({ name: 'payments' });

    await s.test.execute({ name: 'payments', payload: { type: 'payment_intent.succeeded' } });

    expect(s.client.sent[0]!.payload).toEqual({ type: 'payment_intent.succeeded' });
  });

  it('works only for dynamic subscriptions, not for config.yaml routes', async () => {
    const s = subscriptions();

    await expect(s.test.execute({ name: 'github' })).rejects.toMatchObject({
      code: 'WEBHOOK.CONFIG_ROUTE',
      message: expect.stringContaining('works only for dynamic subscriptions'),
    });
    expect(s.client.sent).toEqual([]);
  });

  it('says so when there is no such subscription', async () => {
    await expect(subscriptions().test.execute({ name: 'nothing' })).rejects.toMatchObject({ code: 'WEBHOOK.NOT_FOUND' });
  });
});
