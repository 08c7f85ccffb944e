import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { webhookListenerAddress } from '../../adapters/config/webhookSettings.js';
import type { WinstonLogger } from '../../adapters/logging/WinstonLogger.js';
import type { GatewayRegistration } from '../../application/ports/GatewayRegistry.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { ChatReceiverStatus } from '../../domain/chat/chatReceivers.js';
import { errorText } from '../../domain/errors.js';
import type { buildApplicationContainer } from '../applicationContainer.js';
import type { InboundChat } from './inboundChat.js';

/**
 * What a gateway says about itself while it runs: its registration on its home for `agent status`
 * and in its lease on a shared store, and the states of its chat receivers as they change.
 */

/** What this gateway says about itself: on its home for `agent status`, and in its lease on a shared job store. */
export function registrationOf(
  container: Awaited<ReturnType<typeof buildApplicationContainer>>['container'],
  config: AgentConfig,
  port: number | null,
  provider: string,
): GatewayRegistration {
  const claimant = container.get(TOKENS.ProcessIdentity).claimant();
  return {
    pid: process.pid,
    host: claimant.slice(0, claimant.lastIndexOf(':')),
    startedAt: container.get(TOKENS.Clock).now().toISOString(),
    listener: listenerOf(config, port),
    provider,
  };
}

/** `host:port` of this gateway's HTTP listener; null when it serves none. */
export function listenerOf(config: AgentConfig, port: number | null): string | null {
  return port === null ? null : `${webhookListenerAddress(config).host}:${port}`;
}

/**
 * Registers this gateway on its home for `agent status` (pid, start, listener, provider). A home
 * where it cannot be written is worth a warning, not a refusal to run.
 */
export async function register(
  container: Awaited<ReturnType<typeof buildApplicationContainer>>['container'],
  config: AgentConfig,
  port: number | null,
  provider: string,
  chatReceivers: readonly ChatReceiverStatus[],
  logger: WinstonLogger,
): Promise<GatewayRegistration | null> {
  const registration = { ...registrationOf(container, config, port, provider), chatReceivers };
  try {
    await container.get(TOKENS.GatewayRegistry).register(registration);
    return registration;
  } catch (error) {
    logger.warn(`could not register this gateway for "agent status": ${errorText(error)}`);
    return null;
  }
}

/**
 * Publishes the chat receivers' states now and each time they change: one write at a time, and a write
 * that waited writes the newest states (those in between are skipped). A write that fails is
 * logged once, and the next change tries again. `stop` waits for the write under way.
 */
export function publishReceiverStates(
  chat: InboundChat,
  publish: (statuses: ChatReceiverStatus[]) => Promise<void>,
  logger: WinstonLogger,
): { stop(): Promise<void> } {
  let newest: ChatReceiverStatus[] | null = null;
  let writing = Promise.resolve();
  let stopped = false;
  let failing = false;
  const changed = (statuses: ChatReceiverStatus[]) => {
    if (stopped) return;
    newest = statuses;
    writing = writing.then(async () => {
      const statesNow = newest;
      newest = null;
      if (stopped || statesNow === null) return;
      try {
        await publish(statesNow);
        failing = false;
      } catch (error) {
        if (!failing) logger.warn(`could not record the chat receivers' states for "agent status": ${errorText(error)}`);
        failing = true;
      }
    });
  };
  chat.onReceiversChange(changed);
  // The lease on a shared store was taken before the receivers existed: they are told now.
  changed(chat.receivers());
  return {
    stop: async () => {
      stopped = true;
      await writing;
    },
  };
}
