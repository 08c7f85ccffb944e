import type { Router } from 'express';
import type { Container } from 'inversify';
import { ConverseInChats } from '../../application/chat/ConverseInChats.js';
import type { ConversationStore } from '../../application/ports/ConversationStore.js';
import type { InboundChatSource, InboundCursorStore } from '../../application/ports/InboundChat.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileChatStore } from '../../adapters/chat/FileChatStore.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { chatSettingsFrom } from '../../adapters/config/chatSettings.js';
import { platformSettings, type PlatformSettings } from '../../adapters/delivery/PlatformSettings.js';
import { PLATFORM_SPECS } from '../../adapters/delivery/platformCatalog.js';
import { webhookListenerSettingsFrom } from '../../adapters/config/webhookSettings.js';

/** The gateway's chat receivers and the use case answering them (docs/chat-platforms.md). */
export interface InboundChat {
  /** `POST /slack/events`, for the gateway's HTTP listener, when Slack receiving is on. */
  slackEvents: Router | null;
  /** Answers what an earlier run still owes, then starts every receiver. */
  start(): Promise<void>;
  /** Stops receiving, then waits up to `graceMs` for turns running; true when they all ended. */
  stop(graceMs: number): Promise<boolean>;
}

interface SourceContext {
  settings: PlatformSettings;
  container: Container;
  config: AgentConfig;
  logger: Logger;
  store: ConversationStore & InboundCursorStore;
}

type Receiver = InboundChatSource & { router?: Router };

/** How each platform's receiver is made; each is loaded only when its platform receives. */
const RECEIVERS: Readonly<Record<string, (context: SourceContext) => Promise<Receiver>>> = {
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

/**
 * Builds the receivers of the platforms whose `inbound` is on (null when none is), and binds the
 * conversation use case with its store: the database's, or files under `$AGENT_HOME/chat/`. The start-up check has refused
 * already what cannot work (nobody allowed, a credential missing).
 */
export async function prepareInboundChat(
  container: Container,
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
  paths: AgentPaths,
  logger: Logger,
  /** The database's chat store when the gateway runs on one; null: files under `$AGENT_HOME/chat/`. */
  databaseStore: (() => Promise<ConversationStore & InboundCursorStore>) | null,
): Promise<InboundChat | null> {
  const { settings } = chatSettingsFrom(config, env);
  const names = Object.keys(settings.platforms);
  if (names.length === 0) return null;
  const store = databaseStore ? await databaseStore() : new FileChatStore(paths.home);
  container.bind(TOKENS.ChatSettings).toConstantValue(settings);
  container.bind(TOKENS.ConversationStore).toConstantValue(store);
  container.bind(ConverseInChats).toSelf().inSingletonScope();
  const sections = config.platforms as Record<string, Record<string, unknown> | undefined>;
  const receivers = await Promise.all(
    names.map((name) =>
      RECEIVERS[name]!({
        settings: platformSettings(name, sections[name] ?? {}, env, { ...(PLATFORM_SPECS[name]?.defaults ?? {}) }),
        container,
        config,
        logger,
        store,
      }),
    ),
  );
  const chats = container.get(ConverseInChats);
  return {
    slackEvents: receivers.find((receiver) => receiver.platform === 'slack')?.router ?? null,
    async start() {
      await chats.start(new Map(receivers.map((receiver) => [receiver.platform, (conversation) => receiver.typing(conversation)])));
      await Promise.all(receivers.map((receiver) => receiver.start((message) => chats.receive(message))));
      logger.info(`chat: answering on ${names.join(', ')}`, { platforms: names.join(',') });
    },
    async stop(graceMs) {
      await Promise.all(receivers.map((receiver) => receiver.stop().catch(() => undefined)));
      return chats.stop(graceMs);
    },
  };
}
