import type { Server } from 'node:http';
import type { Router } from 'express';
import { createWebhookApp } from '../../src/adapters/http/webhookApp.js';
import { closeWebhookServer, createWebhookServer, listenWebhookServer } from '../../src/adapters/http/webhookServer.js';
import { WebhookSignatureVerifier } from '../../src/adapters/security/WebhookSignatureVerifier.js';
import { InMemoryWebhookRateLimiter } from '../../src/adapters/webhook/InMemoryWebhookRateLimiter.js';
import { DEFAULT_WEBHOOK_LISTENER_SETTINGS, type WebhookListenerSettings } from '../../src/application/ports/WebhookSettings.js';
import { AcceptWebhook } from '../../src/application/webhook/AcceptWebhook.js';
import { WebhookAdmission } from '../../src/application/webhook/WebhookAdmission.js';
import type { WebhookEvent } from '../../src/domain/webhook/WebhookEvent.js';
import type { WebhookRoute } from '../../src/domain/webhook/WebhookRoute.js';
import { FakeWebhookRoutes } from './fakes/FakeWebhookRoutes.js';
import { InMemoryWebhookInbox } from './fakes/InMemoryWebhookInbox.js';
import { ManualClock } from './fakes/ManualClock.js';
import { RecordingLogger } from './fakes/RecordingLogger.js';
import { SequentialIds } from './fakes/SequentialIds.js';

export interface WebhookListener {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  routes: FakeWebhookRoutes;
  inbox: InMemoryWebhookInbox;
  clock: ManualClock;
  logger: RecordingLogger;
  /** Every event in the inbox, claimed (so call it once per check). */
  stored(): Promise<WebhookEvent[]>;
  close(): Promise<void>;
}

/**
 * The real listener — Express app, AcceptWebhook, WebhookSignatureVerifier — on 127.0.0.1 and an
 * ephemeral port, over an in-memory inbox, fake routes and a clock that stands still.
 */
export async function startWebhookListener(
  options: { routes?: WebhookRoute[]; settings?: Partial<WebhookListenerSettings>; now?: Date | string; slackEvents?: Router } = {},
): Promise<WebhookListener> {
  const settings = { ...DEFAULT_WEBHOOK_LISTENER_SETTINGS, ...options.settings };
  const routes = new FakeWebhookRoutes(options.routes ?? []);
  const inbox = new InMemoryWebhookInbox();
  const clock = new ManualClock(options.now ?? '2026-11-22T10:00:00.000Z');
  const logger = new RecordingLogger();
  const acceptWebhook = new AcceptWebhook(
    new WebhookAdmission(new WebhookSignatureVerifier(clock), new InMemoryWebhookRateLimiter(), logger, settings),
    inbox,
    clock,
    new SequentialIds(),
    logger,
  );
  const server = createWebhookServer(createWebhookApp({ routes, acceptWebhook, settings, logger, slackEvents: options.slackEvents }));
  const { port } = await listenWebhookServer(server, '127.0.0.1', 0);
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    port,
    routes,
    inbox,
    clock,
    logger,
    async stored() {
      const events: WebhookEvent[] = [];
      for (let event = await inbox.claimNext(); event; event = await inbox.claimNext()) events.push(event);
      return events;
    },
    async close() {
      server.closeAllConnections();
      await closeWebhookServer(server);
    },
  };
}
