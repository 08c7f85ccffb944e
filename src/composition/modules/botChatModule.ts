import { ContainerModule } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileBotChatDelivery } from '../../adapters/botchat/FileBotChatDelivery.js';
import { FileBotChatOwner } from '../../adapters/botchat/FileBotChatOwner.js';
import { BOT_CHAT_TOKENS } from '../../adapters/botchat/tokens.js';

/**
 * Bot-chat delivery (docs/delivery.md) over the mailboxes under each home's `runtime/bot_chat/`;
 * the command-line lane runs this same executable (`node <script> chat …`).
 */
export const botChatModule = new ContainerModule(({ bind }) => {
  bind(BOT_CHAT_TOKENS.AgentCommand).toConstantValue([process.execPath, ...(process.argv[1] ? [process.argv[1]] : [])]);
  bind(TOKENS.BotChatDelivery).to(FileBotChatDelivery).inSingletonScope();
  bind(TOKENS.BotChatOwner).to(FileBotChatOwner).inSingletonScope();
});
