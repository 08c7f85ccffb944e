import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfiguredWebhookRoutes } from '../../src/adapters/config/ConfiguredWebhookRoutes.js';
import { FileWebhookRunRecords } from '../../src/adapters/persistence/FileWebhookRunRecords.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { TOKENS } from '../../src/application/ports/tokens.js';
import { ListWebhookRuns } from '../../src/application/webhook/ListWebhookRuns.js';
import { ListWebhooks } from '../../src/application/webhook/subscriptions/ListWebhooks.js';
import { RemoveWebhookSubscription } from '../../src/application/webhook/subscriptions/RemoveWebhookSubscription.js';
import { SubscribeWebhook } from '../../src/application/webhook/subscriptions/SubscribeWebhook.js';
import { TestWebhookSubscription } from '../../src/application/webhook/subscriptions/TestWebhookSubscription.js';
import { InMemoryWebhookRateLimiter } from '../../src/adapters/webhook/InMemoryWebhookRateLimiter.js';
import { WebhookWorker } from '../../src/adapters/webhook/WebhookWorker.js';
import { AcceptWebhook } from '../../src/application/webhook/AcceptWebhook.js';
import { buildApplicationContainer } from '../../src/composition/applicationContainer.js';
import { webhookModule } from '../../src/composition/modules/webhookModule.js';
import { DEFAULT_WEBHOOK_LISTENER_SETTINGS } from '../../src/application/ports/WebhookSettings.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';

describe('webhookSubscriptionModule', () => {
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-webhook-wiring-'));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('gives every container the agent webhook commands, and a subscription they make is a route', async () => {
    const { container } = await buildApplicationContainer(agentPathsFor(home), {}, new RecordingLogger());

    const { subscription } = await container.get(SubscribeWebhook).execute({ name: 'payments' });

    expect(subscription.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await container.get(ListWebhooks).execute()).routes.map((route) => route.name)).toEqual(['payments']);
    expect(container.get(TestWebhookSubscription)).toBeInstanceOf(TestWebhookSubscription);
    expect(container.get(TOKENS.LocalWebhookClient).urlOf('payments')).toBe('http://127.0.0.1:8644/webhooks/payments');
    await container.get(RemoveWebhookSubscription).execute({ name: 'payments' });
  });

  it('lets the gateway add its webhook module on top, sharing one routes source', async () => {
    const { container, settings } = await buildApplicationContainer(agentPathsFor(home), {}, new RecordingLogger());

    container.load(
      webhookModule({
        listener: DEFAULT_WEBHOOK_LISTENER_SETTINGS,
        worker: {
          maxConcurrentRuns: 4,
          maxConcurrentDeliveries: 2,
          idleTimeoutMs: settings.idleTimeoutMs,
          defaultModel: settings.defaultModel,
          pollIntervalMs: 1000,
        },
      }),
    );

    expect(container.get(WebhookWorker)).toBeInstanceOf(WebhookWorker);
    expect(container.get(TOKENS.WebhookRoutes)).toBe(container.get(ConfiguredWebhookRoutes));
    expect(container.get(AcceptWebhook)).toBeInstanceOf(AcceptWebhook);
    expect(container.get(TOKENS.WebhookRateLimiter)).toBeInstanceOf(InMemoryWebhookRateLimiter);
    expect(container.get(TOKENS.WebhookRateLimiter)).toBe(container.get(TOKENS.WebhookRateLimiter));
  });

  it('gives every container the webhook run records, so agent webhook runs needs no gateway', async () => {
    const { container } = await buildApplicationContainer(agentPathsFor(home), {}, new RecordingLogger());

    expect(await container.get(ListWebhookRuns).execute({ limit: 5 })).toEqual([]);
    expect(container.get(TOKENS.WebhookRunRecords)).toBeInstanceOf(FileWebhookRunRecords);
  });
});
