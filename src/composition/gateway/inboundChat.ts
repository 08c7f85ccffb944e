import type { Router } from 'express';
import type { Container } from 'inversify';
import { ChatReceivers } from '../../application/chat/ChatReceivers.js';
import { ChatTurns } from '../../application/chat/ChatTurns.js';
import { ConverseInChats } from '../../application/chat/ConverseInChats.js';
import { NO_METRICS } from '../../application/ports/Metrics.js';
import type { ChatReceiverStatus } from '../../domain/chat/chatReceivers.js';
import type { ConversationStore } from '../../application/ports/ConversationStore.js';
import type { ChatReceiverLease, InboundChatSource, InboundCursorStore } from '../../application/ports/InboundChat.js';
import type { Timer } from '../../application/ports/Timer.js';
import { errorText } from '../../domain/errors.js';
import { ownEntry } from '../../domain/ownEntry.js';
import { FileChatReceiverLease } from '../../adapters/chat/FileChatReceiverLease.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileChatStore } from '../../adapters/chat/FileChatStore.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { chatSettingsFrom, RECEIVER_NEEDS, type InboundPlatform, type ReceiverNeeds } from '../../adapters/config/chatSettings.js';
import { platformSettings, type PlatformSettings } from '../../adapters/delivery/PlatformSettings.js';
import { PLATFORM_SPECS } from '../../adapters/delivery/platformCatalog.js';
import { webhookListenerSettingsFrom } from '../../adapters/config/webhookSettings.js';

/** The gateway's chat receivers and the use case answering them (docs/chat-platforms.md). */
export interface InboundChat {
  /** `POST /slack/events`, for the gateway's HTTP listener, when Slack receiving is on. */
  slackEvents: Router | null;
  /** Answers what an earlier run still owes, then starts every receiver; one that cannot start is tried again on its own. */
  start(): Promise<void>;
  /** Stops receiving, then waits up to `graceMs` for turns running; true when they all ended. */
  stop(graceMs: number): Promise<boolean>;
  /** Where each receiver stands now. */
  receivers(): ChatReceiverStatus[];
  /** Calls `listener` each time a receiver's state changes. */
  onReceiversChange(listener: (statuses: ChatReceiverStatus[]) => void): void;
}

interface SourceContext {
  settings: PlatformSettings;
  container: Container;
  config: AgentConfig;
  logger: Logger;
  store: ConversationStore & InboundCursorStore;
}

type Receiver = InboundChatSource & { router?: Router };

/**
 * How each platform's receiver is made; each is loaded only when its platform receives. The
 * platforms are RECEIVER_NEEDS's (src/adapters/config/chatSettings.ts): the type asks for each.
 */
const RECEIVERS: { readonly [P in InboundPlatform]: (context: SourceContext) => Promise<Receiver> } = {
  telegram: async ({ settings, container, logger, store }) => {
    const { createTelegramInboundSource } = await import('../../adapters/inbound/TelegramInboundSource.js');
    return createTelegramInboundSource({
      botToken: settings.require('bot_token'),
      baseUrl: settings.get('base_url'),
      requestTimeoutMs: settings.timeoutMs,
      cursors: store,
      logger,
      timer: container.get(TOKENS.Timer),
    });
  },
  discord: async ({ settings, container, logger, store }) => {
    const { createDiscordGatewaySource } = await import('../../adapters/inbound/DiscordGatewaySource.js');
    return createDiscordGatewaySource({
      botToken: settings.require('bot_token'),
      baseUrl: settings.get('base_url'),
      timeoutSeconds: settings.timeoutMs / 1000,
      logger,
      timer: container.get(TOKENS.Timer),
      cursors: store,
    });
  },
  slack: async ({ settings, container, config, logger }) => {
    const { createSlackEventsSource } = await import('../../adapters/inbound/SlackEventsSource.js');
    const listener = webhookListenerSettingsFrom(config);
    return createSlackEventsSource({
      botToken: settings.require('bot_token'),
      signingSecret: settings.require('signing_secret'),
      baseUrl: settings.get('base_url'),
      timeoutMs: settings.timeoutMs,
      clock: container.get(TOKENS.Clock),
      logger,
      maxBodyBytes: listener.maxBodyBytes,
    });
  },
};

/** How often a gateway that does not hold the receiving role tries to take it. */
export const RECEIVER_TAKE_EVERY_MS = 5_000;

/** Whether `platform`'s receiver is pushed to (Slack's events reach the listener of any gateway); the others pull, and only the holder of the role runs them. */
const isPushed = (platform: string): boolean => ownEntry<ReceiverNeeds>(RECEIVER_NEEDS, platform)?.pushed ?? false;

/**
 * Builds the receivers of the platforms whose `inbound` is on (null when none is), and binds the
 * conversation use case with its store: the database's, or files under `$AGENT_HOME/chat/`. The
 * start-up check has refused already what cannot work (nobody allowed, a credential missing).
 *
 * Of several gateways sharing the store, one holds the receiving role (ChatReceiverLease): it
 * runs the receivers that pull (Telegram, Discord) and answers every pending message; the others
 * keep what Slack pushes to them, for it to answer, and try to take the role every
 * RECEIVER_TAKE_EVERY_MS, so that one of them answers within seconds of the holder's end.
 */
export async function prepareInboundChat(
  container: Container,
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
  paths: AgentPaths,
  logger: Logger,
  /** The database's chat store and receiving role when the gateway runs on one; null: files under `$AGENT_HOME/chat/`. */
  database: { store: () => Promise<ConversationStore & InboundCursorStore>; lease: () => Promise<ChatReceiverLease> } | null,
): Promise<InboundChat | null> {
  const { settings } = chatSettingsFrom(config, env);
  const names = Object.keys(settings.platforms);
  if (names.length === 0) return null;
  const store = database ? await database.store() : new FileChatStore(paths.home);
  const lease: ChatReceiverLease = database ? await database.lease() : new FileChatReceiverLease(paths.home);
  container.bind(TOKENS.ChatSettings).toConstantValue(settings);
  container.bind(TOKENS.ConversationStore).toConstantValue(store);
  container.bind(ChatTurns).toSelf().inSingletonScope();
  container.bind(ConverseInChats).toSelf().inSingletonScope();
  const sections = config.platforms as Record<string, Record<string, unknown> | undefined>;
  const receiverOf = (name: string) =>
    ownEntry(RECEIVERS, name)!({
      settings: platformSettings(name, ownEntry(sections, name) ?? {}, env, { ...(ownEntry(PLATFORM_SPECS, name)?.defaults ?? {}) }),
      container,
      config,
      logger,
      store,
    });
  const chats = container.get(ConverseInChats);
  const timer = container.get<Timer>(TOKENS.Timer);
  // Slack's receiver is made once, for its router to be mounted on the listener; it can be
  // started again after a failed start. The pulling ones are made afresh for each start: a
  // stopped Discord source cannot start again.
  const slack = names.includes('slack') ? await receiverOf('slack') : null;
  const receivers = new ChatReceivers({
    recipes: names.map((name) => ({
      platform: name,
      pushed: isPushed(name),
      make: name === 'slack' && slack ? async () => slack : () => receiverOf(name),
    })),
    deliver: (message) => chats.receive(message),
    timer,
    clock: container.get(TOKENS.Clock),
    logger,
    metrics: container.isBound(TOKENS.Metrics) ? container.get(TOKENS.Metrics) : NO_METRICS,
  });
  const trying = new AbortController();
  let holding = false;
  let waitingLogged = false;
  let takeFailing = false;

  /** Takes the role if it is free, and then answers; otherwise tries again in a while. */
  const takeRole = async (): Promise<void> => {
    if (trying.signal.aborted) return;
    let taken = false;
    try {
      taken = await lease.tryTake(() => void lost());
      if (takeFailing) logger.info('chat: the receiving role can be asked for again');
      takeFailing = false;
    } catch (error) {
      // An outage of the store is logged once, and its end once.
      if (!takeFailing)
        logger.warn(`chat: could not ask for the receiving role; trying again every ${RECEIVER_TAKE_EVERY_MS / 1000} s`, {
          error: errorText(error),
        });
      takeFailing = true;
    }
    if (trying.signal.aborted) {
      if (taken) await lease.release();
      return;
    }
    if (!taken) {
      if (!waitingLogged) {
        logger.info(
          `chat: another gateway sharing this store answers on ${names.join(', ')}; this one keeps what reaches it and takes over if that one stops`,
        );
        waitingLogged = true;
      }
      tryAgainLater();
      return;
    }
    holding = true;
    waitingLogged = false;
    try {
      await chats.start(receivers.typing());
    } catch (error) {
      // The store went away while answering began: the role goes back, for this gateway or another.
      holding = false;
      chats.pause();
      await lease.release().catch(() => undefined);
      logger.error(`chat: could not start answering; trying again in ${RECEIVER_TAKE_EVERY_MS / 1000} s`, { error: errorText(error) });
      tryAgainLater();
      return;
    }
    // Each receiver on its own: one that cannot start is tried again without holding up the others.
    await receivers.startPulling();
    if (holding) logger.info(`chat: answering on ${names.join(', ')}`, { platforms: names.join(',') });
  };

  /** Tries to take the role again in a while, unless the gateway is stopping. */
  const tryAgainLater = (): void => {
    void timer
      .wait(RECEIVER_TAKE_EVERY_MS, trying.signal, { background: true })
      .then(() => takeRole())
      .catch((error: unknown) => logger.error('chat: taking the receiving role failed', { error: errorText(error) }));
  };

  /** The role was lost (the store's connection broke): the pulling receivers stop, and the role is taken again when it can be. */
  const lost = async (): Promise<void> => {
    if (!holding || trying.signal.aborted) return;
    holding = false;
    logger.warn(
      `chat: this gateway lost the receiving role (its connection to the store broke); it stops answering on ${names.join(', ')} and takes the role again when it can`,
    );
    chats.pause();
    await receivers.stopPulling();
    tryAgainLater();
  };

  return {
    slackEvents: slack?.router ?? null,
    async start() {
      // What is pushed is kept by every gateway; the role decides who answers.
      await receivers.startPushed();
      await takeRole();
    },
    async stop(graceMs) {
      trying.abort();
      await receivers.stop();
      const ended = await chats.stop(graceMs);
      await lease.release().catch(() => undefined);
      return ended;
    },
    receivers: () => receivers.statuses(),
    onReceiversChange: (listener) => receivers.onChange(listener),
  };
}
