import type { ServiceIdentifier } from 'inversify';

/** Tokens for the bot-chat adapters. */
export const BOT_CHAT_TOKENS = {
  /** The `agent` executable as a command line: node and the script it runs. */
  AgentCommand: Symbol.for('agent.botchat.AgentCommand') as ServiceIdentifier<readonly string[]>,
} as const;
