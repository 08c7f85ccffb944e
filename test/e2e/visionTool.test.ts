import type { ChildProcess } from 'node:child_process';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { FakeLlmServer, replies, type LlmWireFormat, type RecordedRequest } from '../support/fakeLlmServer.js';
import { answer, LocalWebServer } from '../support/localWebServer.js';
import { PNG_BASE64, PNG_BYTES } from '../support/sampleImages.js';
import { localModelLines, webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';

/**
 * The vision tool as users run it, through the built dist/agent.js: a cron run's model asks to
 * look at a PNG served on this machine, the next request to the model carries the image as an
 * image part, and that answer is the tool result the run's model gets back.
 */

const LLM_KEY = { TEST_LLM_KEY: 'test-llm-key' };

/** The tool results a recorded request carries, in either format. */
function toolResultsOf(request: RecordedRequest | undefined): string[] {
  const messages = (request?.body.messages ?? []) as Array<Record<string, any>>;
  if (request?.format === 'openai') return messages.filter((message) => message.role === 'tool').map((message) => message.content);
  return messages
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((block: Record<string, any>) => block.type === 'tool_result')
    .map((block: Record<string, any>) => block.content);
}

/** The image parts of a recorded request's messages, as data URLs in OpenAI's form or as Anthropic's source. */
function imagePartsOf(request: RecordedRequest | undefined): unknown[] {
  const messages = (request?.body.messages ?? []) as Array<Record<string, any>>;
  return messages
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((part: Record<string, any>) => part.type === 'image_url' || part.type === 'image');
}

describe('the vision tool through the built executable', () => {
  let home: string;
  let llm: FakeLlmServer;
  let web: LocalWebServer;

  beforeAll(() => requireBuiltAgent());

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    // Served as a generic type: the tool goes by the bytes.
    web = await LocalWebServer.start({ '/chart.png': answer(200, 'application/octet-stream', PNG_BYTES) });
    home = await makeAgentHome();
  });

  afterEach(async () => {
    await llm.close();
    await web.close();
    await removeAgentHome(home);
  });

  const writeConfig = (type: LlmWireFormat, providerLines: string[] = [], extra: string[] = []) => {
    const lines = localModelLines(llm, type);
    const afterProvider = lines.findIndex((line) => line.startsWith('    api_key_env:')) + 1;
    lines.splice(afterProvider, 0, ...providerLines);
    return writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...lines, ...extra, ''].join('\n'));
  };

  const createJob = async () => {
    const created = await runAgent(
      ['cron', 'create', 'every 1h', 'Describe the chart', '--name', 'chart', '--deliver', 'local', '--no-tick'],
      { home, env: LLM_KEY },
    );
    expect(created).toMatchObject({ code: 0 });
  };

  const visionCall = () =>
    replies.toolCalls({ name: 'vision', arguments: { image_url: web.url('/chart.png'), question: 'What does the chart show?' } });

  it('a cron run: the request after the vision call carries the PNG as an image_url part (OpenAI format)', async () => {
    await writeConfig('openai');
    await createJob();
    llm.reply(visionCall(), replies.text('A single red pixel.'), replies.text('The chart is one red pixel.'));

    const run = await runAgent(['cron', 'run', 'chart', '--no-tick'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0 });
    expect(llm.requests).toHaveLength(3);
    expect(llm.requests[0]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain('vision');
    expect(llm.requests[1]!.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What does the chart show?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
        ],
      },
    ]);
    expect(toolResultsOf(llm.requests[2])).toEqual(['A single red pixel.']);
    expect(imagePartsOf(llm.requests[2])).toEqual([]);
  });

  it('a cron run: the request after the vision call carries the PNG as a base64 image block (Anthropic format)', async () => {
    await writeConfig('anthropic');
    await createJob();
    llm.reply(visionCall(), replies.text('A single red pixel.'), replies.text('The chart is one red pixel.'));

    const run = await runAgent(['cron', 'run', 'chart', '--no-tick'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0 });
    expect(imagePartsOf(llm.requests[1])).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
    ]);
    expect(toolResultsOf(llm.requests[2])).toEqual(['A single red pixel.']);
  });

  it('a model configured to take no images: one sentence back, and the run goes on', async () => {
    await writeConfig('openai', ['    vision: false']);
    await createJob();
    llm.reply(visionCall(), replies.text('I could not look at the chart.'));

    const run = await runAgent(['cron', 'run', 'chart', '--no-tick'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0 });
    expect(llm.requests).toHaveLength(2);
    expect(toolResultsOf(llm.requests[1])).toEqual([
      'This model does not take images (local (test-model)): providers.local.vision is false in the configuration; go on without looking at the image.',
    ]);
  });

  it('a model whose provider refuses the image: one sentence back, and the run goes on', async () => {
    await writeConfig('openai');
    await createJob();
    llm.reply(
      visionCall(),
      replies.error(400, 'Invalid content type. image_url is only supported by certain models.'),
      replies.text('No chart then.'),
    );

    const run = await runAgent(['cron', 'run', 'chart', '--no-tick'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0 });
    expect(toolResultsOf(llm.requests[2])).toEqual([
      `This model does not take images (local (test-model)): ${llm.openAiBaseUrl} refused the request ` +
        '(HTTP 400: Invalid content type. image_url is only supported by certain models.); go on without looking at the image.',
    ]);
  });

  describe('in a webhook run', () => {
    const SECRET = 'route-secret';
    let gateway: ChildProcess | null = null;

    afterEach(() => {
      if (gateway?.exitCode === null) gateway.kill('SIGKILL');
      gateway = null;
    });

    it('refuses an image on a loopback address, as web_extract does', async () => {
      const port = await freePort();
      await writeConfig(
        'openai',
        [],
        [...webhookListenerLines(port, SECRET), '        github:', '          prompt: "Look at the chart of PR {number}"'],
      );
      llm.reply(visionCall(), replies.text('Chart not reachable.'));
      const started = await startGatewayUntil(home, 'webhook listening on', { env: LLM_KEY });
      gateway = started.gateway;

      const response = await postPullRequestEvent(port, SECRET, 'delivery-vision', { action: 'opened', number: 7 });

      expect(response.status).toBe(202);
      expect(await eventually(() => started.output().includes('Chart not reachable.'), 15_000)).toBe(true);
      expect(toolResultsOf(llm.requests[1])).toEqual([
        `Could not fetch the image at ${web.url('/chart.png')}: 127.0.0.1 is a loopback, private or otherwise non-public address. ` +
          'Runs started by a webhook fetch only public addresses (a route allows more with allow_private_networks: true).',
      ]);
      expect(web.requests).toEqual([]);
    });
  });
});
