import 'reflect-metadata';
import { AnthropicMessagesModel } from '../../../src/adapters/agents/AnthropicMessagesModel.js';
import { OpenAiChatModel } from '../../../src/adapters/agents/OpenAiChatModel.js';
import { SystemTimer } from '../../../src/adapters/system/SystemTimer.js';
import { publicAddressesOnly } from '../../../src/adapters/tools/publicAddresses.js';
import { VisionTool } from '../../../src/adapters/tools/VisionTool.js';
import { RunAgentSession, type ProviderTarget } from '../../../src/application/agent/RunAgentSession.js';
import { CredentialPool } from '../../../src/domain/agent/CredentialPool.js';
import { sampleRunRequest } from '../../support/agentRuns.js';
import { FakeLlmServer, replies, type LlmWireFormat, type RecordedRequest } from '../../support/fakeLlmServer.js';
import { answer, LocalWebServer } from '../../support/localWebServer.js';
import { PNG_BASE64, PNG_BYTES } from '../../support/sampleImages.js';
import { FixedToolCatalog } from '../../support/scriptedTools.js';

/*
 * The vision tool in a session over the two real SDK adapters: the model asks for it, the next
 * request carries the image in the provider's own form, and that call's answer goes back to the
 * run's conversation as the tool's result.
 */

let llm: FakeLlmServer;
let web: LocalWebServer;

beforeEach(async () => {
  llm = await FakeLlmServer.start();
  web = await LocalWebServer.start({ '/pixel.png': answer(200, 'image/png', PNG_BYTES) });
});

afterEach(async () => {
  await llm.close();
  await web.close();
});

function target(format: LlmWireFormat, overrides: Partial<ProviderTarget> = {}): ProviderTarget {
  const model =
    format === 'openai'
      ? new OpenAiChatModel({ endpoint: llm.openAiBaseUrl })
      : new AnthropicMessagesModel({ endpoint: llm.anthropicBaseUrl });
  return {
    provider: `test-${format}`,
    model: 'model-1',
    chatModel: async () => model,
    credentials: new CredentialPool(['sk-test-1'], 'TEST_API_KEY'),
    keyHelp: 'TEST_API_KEY',
    ...overrides,
  };
}

async function runWithVision(format: LlmWireFormat, overrides: Partial<ProviderTarget> = {}) {
  const streamed: string[] = [];
  const session = new RunAgentSession({ tools: new FixedToolCatalog([new VisionTool(publicAddressesOnly)]), timer: new SystemTimer() });
  const result = await session.execute({
    request: sampleRunRequest({ onText: (delta) => streamed.push(delta) }),
    chain: [target(format, overrides)],
  });
  return { result, streamed: streamed.join('') };
}

const visionCall = () => ({
  id: 'call_1',
  name: 'vision',
  arguments: { image_url: web.url('/pixel.png'), question: 'What colour is the pixel?' },
});

/** The content of the tool result for call_1 in a recorded request, in either format. */
function visionResultOf(recorded: RecordedRequest): string | undefined {
  const messages = recorded.body.messages as Array<Record<string, any>>;
  if (recorded.format === 'openai') return messages.find((message) => message.role === 'tool')?.content;
  const blocks = messages.flatMap((message) => (Array.isArray(message.content) ? message.content : []));
  return blocks.find((block: Record<string, any>) => block.type === 'tool_result')?.content;
}

const IMAGE_MESSAGES: Record<LlmWireFormat, unknown[]> = {
  openai: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What colour is the pixel?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
      ],
    },
  ],
  anthropic: [
    {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
        { type: 'text', text: 'What colour is the pixel?' },
      ],
    },
  ],
};

describe.each<LlmWireFormat>(['openai', 'anthropic'])('the vision tool over the SDKs (%s format)', (format) => {
  it('sends the image in the next request as an image part, and the answer back as the tool result', async () => {
    llm.reply(replies.toolCalls(visionCall()), replies.text('It is ', 'red.'), replies.text('The pixel is red.'));

    const { result, streamed } = await runWithVision(format);

    expect(result.text).toBe('The pixel is red.');
    expect(llm.requests).toHaveLength(3);
    const imageRequest = llm.requests[1]!;
    expect(imageRequest.body.messages).toEqual(IMAGE_MESSAGES[format]);
    expect(imageRequest.body).toMatchObject({ model: 'model-1', stream: true });
    expect(imageRequest.body.tools).toBeUndefined();
    expect(imageRequest.body.system).toBeUndefined();
    expect(imageRequest.apiKey).toBe('sk-test-1');
    expect(visionResultOf(llm.requests[2]!)).toBe('It is red.');
    // Only the run's own answer streams to its reader, not what the model said about the image.
    expect(streamed).toBe('The pixel is red.');
    // The call about the image is a model turn of the run: its tokens are counted with the others.
    expect(result.usage).toMatchObject({ model_turns: 3, input_tokens: 36, output_tokens: 15, tool_calls: 1 });
  });

  it('answers one sentence when the provider refuses the image, and the run goes on', async () => {
    llm.reply(
      replies.toolCalls(visionCall()),
      replies.error(400, 'image input is not supported by this model'),
      replies.text('No image then.'),
    );

    const { result } = await runWithVision(format);

    expect(result.text).toBe('No image then.');
    const endpoint = format === 'openai' ? llm.openAiBaseUrl : llm.anthropicBaseUrl;
    expect(visionResultOf(llm.requests[2]!)).toBe(
      `This model does not take images (test-${format} (model-1)): ${endpoint} refused the request ` +
        '(HTTP 400: image input is not supported by this model); go on without looking at the image.',
    );
  });

  it('asks a model configured to take no images nothing, and says so', async () => {
    llm.reply(replies.toolCalls(visionCall()), replies.text('No image then.'));

    const { result } = await runWithVision(format, { noImages: `providers.test-${format}.vision is false in the configuration` });

    expect(result.text).toBe('No image then.');
    expect(llm.requests).toHaveLength(2);
    expect(visionResultOf(llm.requests[1]!)).toBe(
      `This model does not take images (test-${format} (model-1)): providers.test-${format}.vision is false in the configuration; ` +
        'go on without looking at the image.',
    );
  });
});
