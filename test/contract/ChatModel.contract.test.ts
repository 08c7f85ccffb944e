import { AnthropicMessagesModel } from '../../src/adapters/agents/AnthropicMessagesModel.js';
import { OpenAiChatModel } from '../../src/adapters/agents/OpenAiChatModel.js';
import { describeChatModelContract } from './ChatModel.contract.js';

describeChatModelContract('OpenAiChatModel', 'openai', (endpoint) => new OpenAiChatModel({ endpoint }));
describeChatModelContract('AnthropicMessagesModel', 'anthropic', (endpoint) => new AnthropicMessagesModel({ endpoint }));
