import { AnthropicMessagesModel } from '../../../src/adapters/agents/AnthropicMessagesModel.js';
import type { ChatModel } from '../../../src/application/agent/ports/ChatModel.js';
import { CredentialPool } from '../../../src/domain/agent/CredentialPool.js';
import { OpenAiChatModel } from '../../../src/adapters/agents/OpenAiChatModel.js';
import { SystemTimer } from '../../../src/adapters/system/SystemTimer.js';
import { ProviderThrottle } from '../../../src/application/agent/ProviderThrottle.js';
import { RunAgentSession, type ProviderTarget } from '../../../src/application/agent/RunAgentSession.js';
import type { AgentRunRequest, AgentRunResult } from '../../../src/application/ports/AgentRunner.js';
import type { Timer } from '../../../src/application/ports/Timer.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { ToolInputError } from '../../../src/application/agent/ports/Tool.js';
import type { ToolCatalog } from '../../../src/application/agent/ports/ToolCatalog.js';
import { cronRunToolsets } from '../../../src/domain/toolsets.js';
import { failureOf, sampleRunRequest } from '../../support/agentRuns.js';
import { FakeLlmServer, replies, unreachableBaseUrl, type LlmWireFormat, type RecordedRequest } from '../../support/fakeLlmServer.js';
import { eventually } from '../../support/processLiveness.js';
import { everyTool, FixedToolCatalog, RecordingTool } from '../../support/scriptedTools.js';
import { seededRandom } from '../../support/seededRandom.js';

const request = sampleRunRequest;

let server: FakeLlmServer;

beforeEach(async () => {
  server = await FakeLlmServer.start();
});

afterEach(() => server.close());

function chatModel(format: LlmWireFormat, endpoint?: string): ChatModel {
  return format === 'openai'
    ? new OpenAiChatModel({ endpoint: endpoint ?? server.openAiBaseUrl })
    : new AnthropicMessagesModel({ endpoint: endpoint ?? server.anthropicBaseUrl });
}

/*
 * The session loop over the two real SDK adapters and a local server that speaks both wire
 * formats: what reaches the provider, and what comes back. The loop's decisions alone are
 * tested fast in test/application/agent/RunAgentSession.test.ts.
 */

function target(format: LlmWireFormat, overrides: Partial<ProviderTarget> & { endpoint?: string } = {}): ProviderTarget {
  const model = chatModel(format, overrides.endpoint);
  return {
    provider: `test-${format}`,
    model: 'model-1',
    chatModel: async () => model,
    credentials: new CredentialPool(['sk-test-1'], 'TEST_API_KEY'),
    keyHelp: 'TEST_API_KEY',
    ...overrides,
  };
}

interface SessionOptions {
  tools?: ToolCatalog;
  maxToolRounds?: number;
  /** Default: real time, which only the idle-timeout tests let pass. */
  timer?: Timer;
  skippedFallbacks?: string[];
}

/** Runs requests as sessions over `chain`, one fresh session per run as the runner does. */
function sessionsOver(chain: ProviderTarget[], options: SessionOptions = {}): { run(request: AgentRunRequest): Promise<AgentRunResult> } {
  const session = new RunAgentSession({
    tools: options.tools ?? new FixedToolCatalog([]),
    timer: options.timer ?? new SystemTimer(),
    maxToolRounds: options.maxToolRounds,
  });
  return { run: (request) => session.execute({ request, chain, skippedFallbacks: options.skippedFallbacks }) };
}

function runnerFor(format: LlmWireFormat, options: SessionOptions & { target?: Partial<ProviderTarget> & { endpoint?: string } } = {}) {
  return sessionsOver([target(format, options.target)], options);
}

/** The messages of a recorded request, as role and text, in either format. */
function conversationOf(recorded: RecordedRequest): Array<{ role: string; content: unknown }> {
  const messages = recorded.body.messages as Array<{ role: string; content: unknown }>;
  return messages.map(({ role, content }) => ({ role, content }));
}

function offeredToolNames(recorded: RecordedRequest): string[] {
  const tools = (recorded.body.tools ?? []) as Array<{ name?: string; function?: { name: string } }>;
  return tools.map((tool) => tool.function?.name ?? tool.name!);
}

/** The tool results of a recorded request's last message, as `[callId, content, isError]`. */
function toolResultsOf(recorded: RecordedRequest): Array<[string, string, boolean]> {
  const messages = recorded.body.messages as Array<Record<string, any>>;
  if (recorded.format === 'openai') {
    return messages.filter((message) => message.role === 'tool').map((message) => [message.tool_call_id, message.content, false]);
  }
  const last = messages.at(-1)!;
  return (last.content as Array<Record<string, any>>).map((block) => [block.tool_use_id, block.content, block.is_error === true]);
}

const MEMORY_TEXT = '# Memory: MEMORY.md\n\nThe user likes short answers.\n\n# Memory: USER.md\n\nName: Ada';
const SKILL_MESSAGES = [
  { role: 'user', content: '# Skill: weather\n\nLook at the sky.' },
  { role: 'user', content: '# Skill: news\n\nRead the paper.' },
];

describe('An agent session over the SDKs: with the OpenAI Chat Completions format', () => {
  it('streams the answer and sends memory as system, then each skill, then the task', async () => {
    server.reply(replies.text('Sunny', ', 21 °C.'));
    const streamed: string[] = [];

    const result = await runnerFor('openai').run(request({ onText: (delta) => streamed.push(delta) }));

    expect(result).toMatchObject({ text: 'Sunny, 21 °C.', answeredBy: 'test-openai (model-1)' });
    expect(streamed.join('')).toBe('Sunny, 21 °C.');
    const [sent] = server.requests;
    expect(sent!.body).toMatchObject({ model: 'model-1', stream: true });
    expect(conversationOf(sent!)).toEqual([
      { role: 'system', content: MEMORY_TEXT },
      ...SKILL_MESSAGES,
      { role: 'user', content: 'Report the weather.' },
    ]);
    expect(sent!.apiKey).toBe('sk-test-1');
  });

  it('places the earlier turns of a conversation between the skills and the task', async () => {
    server.reply(replies.text('Still sunny.'));

    await runnerFor('openai').run(
      request({
        conversation: [
          { role: 'user', content: 'And yesterday?' },
          { role: 'assistant', content: 'It rained.' },
        ],
      }),
    );

    expect(conversationOf(server.requests[0]!).slice(1)).toEqual([
      ...SKILL_MESSAGES,
      { role: 'user', content: 'And yesterday?' },
      { role: 'assistant', content: 'It rained.' },
      { role: 'user', content: 'Report the weather.' },
    ]);
  });

  it('reads tool calls streamed whole and without an index, as older Ollama versions send them', async () => {
    const search = new RecordingTool('web_search');
    server.reply(
      replies.toolCallsWithoutIndex(
        { id: 'call_a', name: 'web_search', arguments: { query: 'one' } },
        { id: 'call_b', name: 'web_search', arguments: { query: 'two' } },
      ),
      replies.text('Done.'),
    );

    await runnerFor('openai', { tools: new FixedToolCatalog([search]) }).run(request());

    expect(search.calls.map((call) => call.args)).toEqual([{ query: 'one' }, { query: 'two' }]);
    expect(toolResultsOf(server.requests[1]!).map(([id]) => id)).toEqual(['call_a', 'call_b']);
  });

  it('sends no system message when there is no memory, and no tools when none are offered', async () => {
    server.reply(replies.text('Hi.'));

    await runnerFor('openai').run(request({ context: { system: [], skills: [], task: 'Say hi.' } }));

    expect(server.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'Say hi.' }]);
    expect(server.requests[0]!.body).not.toHaveProperty('tools');
  });
});

describe('An agent session over the SDKs: with the Anthropic Messages format', () => {
  it('streams the answer and sends memory as system, then each skill, then the task', async () => {
    server.reply(replies.text('Sunny', ', 21 °C.'));
    const streamed: string[] = [];

    const result = await runnerFor('anthropic').run(request({ onText: (delta) => streamed.push(delta) }));

    expect(result).toMatchObject({ text: 'Sunny, 21 °C.', answeredBy: 'test-anthropic (model-1)' });
    expect(streamed.join('')).toBe('Sunny, 21 °C.');
    const [sent] = server.requests;
    expect(sent!.body).toMatchObject({ model: 'model-1', stream: true, system: MEMORY_TEXT, max_tokens: 8192 });
    expect(conversationOf(sent!)).toEqual([...SKILL_MESSAGES, { role: 'user', content: 'Report the weather.' }]);
    expect(sent!.apiKey).toBe('sk-test-1');
  });
});

describe.each<LlmWireFormat>(['openai', 'anthropic'])('An agent session over the SDKs: tool calls (%s format)', (format) => {
  it('calls the tool with the parsed arguments, sends its result back, and returns the final answer', async () => {
    const search = new RecordingTool('web_search', () => 'Berlin: sunny, 21 °C');
    server.reply(
      replies.toolCalls({ id: 'call_1', name: 'web_search', arguments: { query: 'weather Berlin' } }),
      replies.text('Sunny, 21 °C.'),
    );

    const result = await runnerFor(format, { tools: new FixedToolCatalog([search]) }).run(request());

    expect(result.text).toBe('Sunny, 21 °C.');
    expect(search.calls).toEqual([{ args: { query: 'weather Berlin' }, unattended: true, privateNetworks: true }]);
    expect(server.requests).toHaveLength(2);
    expect(toolResultsOf(server.requests[1]!)).toEqual([['call_1', 'Berlin: sunny, 21 °C', false]]);
  });

  it('tells the tools of a run that may not reach private networks so', async () => {
    const extract = new RecordingTool('web_extract');
    server.reply(replies.toolCalls({ id: 'call_1', name: 'web_extract', arguments: { url: 'http://10.0.0.1/' } }), replies.text('Done.'));

    await runnerFor(format, { tools: new FixedToolCatalog([extract]) }).run(request({ privateNetworks: false }));

    expect(extract.calls).toEqual([{ args: { url: 'http://10.0.0.1/' }, unattended: true, privateNetworks: false }]);
  });

  it('never offers the job tool to a cron run', async () => {
    server.reply(replies.text('Done.'));

    await runnerFor(format, { tools: new FixedToolCatalog(everyTool()) }).run(request({ toolsets: cronRunToolsets() }));

    const offered = offeredToolNames(server.requests[0]!);
    expect(offered).not.toContain('cronjob');
    expect(offered).toEqual(expect.arrayContaining(['terminal', 'web_search', 'web_extract', 'clarify']));
  });

  it('offers the job tool where the toolsets grant it, so the check above is not vacuous', async () => {
    server.reply(replies.text('Done.'));

    await runnerFor(format, { tools: new FixedToolCatalog(everyTool()) }).run(request({ toolsets: ['agent-chat'], unattended: false }));

    expect(offeredToolNames(server.requests[0]!)).toContain('cronjob');
  });

  it('answers malformed arguments with an error result and carries on', async () => {
    const search = new RecordingTool('web_search');
    server.reply(replies.toolCalls({ id: 'call_1', name: 'web_search', arguments: '{"query": "wea' }), replies.text('Sorry.'));

    const result = await runnerFor(format, { tools: new FixedToolCatalog([search]) }).run(request());

    expect(result.text).toBe('Sorry.');
    expect(search.calls).toEqual([]);
    const [[callId, content, isError]] = toolResultsOf(server.requests[1]!) as [[string, string, boolean]];
    expect(callId).toBe('call_1');
    expect(JSON.parse(content).error).toMatch(/^the arguments are not valid JSON .*; call "web_search" again with a JSON object/);
    expect(isError).toBe(format === 'anthropic');
  });

  it('answers an unknown tool and refused arguments with error results and carries on', async () => {
    const strict = new RecordingTool('web_extract', () => {
      throw new ToolInputError('"url" must be an http(s) URL');
    });
    server.reply(
      replies.toolCalls(
        { id: 'call_1', name: 'teleport', arguments: {} },
        { id: 'call_2', name: 'web_extract', arguments: { url: 'ftp://x' } },
      ),
      replies.text('I could not.'),
    );

    const result = await runnerFor(format, { tools: new FixedToolCatalog([strict]) }).run(request());

    expect(result.text).toBe('I could not.');
    const results = toolResultsOf(server.requests[1]!);
    expect(results.map(([id, content]) => [id, JSON.parse(content).error])).toEqual([
      ['call_1', 'unknown tool "teleport"; the tools available are: web_extract'],
      ['call_2', '"url" must be an http(s) URL'],
    ]);
  });

  it('stops a model that keeps calling tools at the round bound', async () => {
    const search = new RecordingTool('web_search');
    server.always = replies.toolCalls({ name: 'web_search', arguments: { query: 'again' } });

    const error = await failureOf(runnerFor(format, { tools: new FixedToolCatalog([search]), maxToolRounds: 3 }).run(request()));

    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(
      /^stopped after 3 tool-call rounds without a final answer: test-\w+ \(model-1\) still asked for web_search;/,
    );
    expect(search.calls).toHaveLength(3);
    expect(server.requests).toHaveLength(4);
  });
});

describe.each<LlmWireFormat>(['openai', 'anthropic'])('An agent session over the SDKs: failures (%s format)', (format) => {
  // When the budget runs out is IdleWatchdog's test, on a fake clock; a stall this does not stop never ends.
  it('stops a stream that stalls with an idle timeout', async () => {
    server.reply(replies.stall('Let me think'));

    const error = await failureOf(runnerFor(format).run(request({ idleTimeoutMs: 300 })));

    expect(error.reason).toBe('idle_timeout');
    expect(error.message).toMatch(
      /^idle timeout: no streamed token or tool call for 0\.3 s while waiting for the model test-\w+ \(model-1\)/,
    );
  });

  it('stops a tool that hangs with an idle timeout, and aborts its signal', async () => {
    let toolSignal: AbortSignal | undefined;
    const hanging = new RecordingTool('terminal', (_args, { signal }) => {
      toolSignal = signal;
      return new Promise<string>(() => undefined);
    });
    server.reply(replies.toolCalls({ name: 'terminal', arguments: { input: 'sleep 1000' } }));

    const error = await failureOf(runnerFor(format, { tools: new FixedToolCatalog([hanging]) }).run(request({ idleTimeoutMs: 300 })));

    expect(error.reason).toBe('idle_timeout');
    expect(error.message).toContain('while waiting for the tool "terminal"');
    expect(toolSignal?.aborted).toBe(true);
  });

  it('ends a run cancelled through its signal as aborted', async () => {
    server.reply(replies.stall('Let me think'));
    const controller = new AbortController();
    const run = runnerFor(format).run(request({ signal: controller.signal, onText: () => controller.abort() }));

    const error = await failureOf(run);

    expect(error.reason).toBe('aborted');
  });

  it('fails at once on a refused key: one request, a clear error', async () => {
    server.reply(replies.error(401, 'Invalid API key'));
    const credentials = new CredentialPool(['sk-bad-1', 'sk-bad-2'], 'TEST_API_KEYS');

    const error = await failureOf(runnerFor(format, { target: { credentials } }).run(request()));

    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(
      /^The provider test-\w+ \(model-1\) failed: http:\/\/127\.0\.0\.1:\d+(\/v1)? refused the API key \(HTTP 401: Invalid API key\); check key 1 of 2 from TEST_API_KEYS\.$/,
    );
    expect(error.message).not.toContain('sk-bad');
    expect(server.requests).toHaveLength(1);
  });

  it('never repeats a key the provider quotes in its error, whole or masked', async () => {
    server.reply(replies.error(401, 'Incorrect API key provided: sk-bad-1. Keys look like sk-proj-****************abcd.'));
    const credentials = new CredentialPool(['sk-bad-1'], 'TEST_API_KEY');

    const error = await failureOf(runnerFor(format, { target: { credentials } }).run(request()));

    expect(error.message).toContain('(HTTP 401: Incorrect API key provided: [key hidden]. Keys look like [key hidden].)');
  });

  it('names the URL of an endpoint that cannot be reached', async () => {
    const endpoint = await unreachableBaseUrl(format === 'openai' ? '/v1' : '');

    const error = await failureOf(runnerFor(format, { target: { endpoint } }).run(request()));

    expect(error.reason).toBe('failed');
    expect(error.message).toBe(`The provider test-${format} (model-1) failed: could not reach ${endpoint} (ECONNREFUSED).`);
  });

  it('says which model a 404 names', async () => {
    server.reply(replies.error(404, 'model not found'));

    const error = await failureOf(runnerFor(format).run(request()));

    expect(error.message).toContain('refused the request (HTTP 404: model not found); check that the model "model-1" exists there.');
  });
});

describe.each<LlmWireFormat>(['openai', 'anthropic'])('An agent session over the SDKs: keys (%s format)', (format) => {
  it('sends no key to a provider that needs none', async () => {
    server.reply(replies.text('Hi.'));

    await runnerFor(format, { target: { credentials: null } }).run(request());

    expect(server.requests[0]!.apiKey).toBeNull();
    expect(server.requests[0]!.headers).not.toHaveProperty('authorization');
    expect(server.requests[0]!.headers).not.toHaveProperty('x-api-key');
  });

  it('repeats a rate-limited call at once with the next key, and skips the resting key until its Retry-After', async () => {
    const timer = new ManualTimer();
    const credentials = new CredentialPool(['sk-1', 'sk-2'], 'TEST_API_KEYS');
    const runner = runnerFor(format, { target: { credentials }, timer });
    server.reply(replies.rateLimited('60'), replies.text('First.'), replies.text('Second.'), replies.text('Third.'));

    expect((await runner.run(request())).text).toBe('First.');
    timer.advance(59_000);
    expect((await runner.run(request())).text).toBe('Second.');
    timer.advance(1_000);
    expect((await runner.run(request())).text).toBe('Third.');

    expect(server.requests.map((sent) => sent.apiKey)).toEqual(['sk-1', 'sk-2', 'sk-2', 'sk-1']);
  });

  it('reads Retry-After as an HTTP date too', async () => {
    const timer = new ManualTimer();
    const credentials = new CredentialPool(['sk-1', 'sk-2'], 'TEST_API_KEYS');
    const runner = runnerFor(format, { target: { credentials }, timer });
    server.reply(replies.rateLimited(new Date(Date.now() + 120_000).toUTCString()), replies.text('First.'), replies.text('Second.'));

    await runner.run(request());
    timer.advance(90_000);
    await runner.run(request());

    expect(server.requests.map((sent) => sent.apiKey)).toEqual(['sk-1', 'sk-2', 'sk-2']);
  });

  it('makes a second session wait out the Retry-After the first one got, and then both answer', async () => {
    const timer = new ManualTimer();
    const throttle = new ProviderThrottle({ name: `test-${format}`, timer, random: seededRandom(3) });
    const runner = runnerFor(format, { target: { throttle }, timer });
    server.reply(replies.rateLimited('7'), replies.text('First.'), replies.text('Second.'));

    const first = runner.run(request());
    expect(await eventually(() => throttle.load.limit !== null)).toBe(true);
    const second = runner.run(request());
    // Each session waits on the gate, and on its idle budget.
    expect(await eventually(() => timer.pending === 4)).toBe(true);
    timer.advance(6_999);
    expect(timer.pending).toBe(4);
    expect(server.requests).toHaveLength(1);

    timer.advance(3_501);
    const answers = await Promise.all([first, second]);

    expect(answers.map((answer) => answer.text).sort()).toEqual(['First.', 'Second.']);
    expect(server.requests).toHaveLength(3);
  });

  it('counts a provider whose keys all rest longer than a call waits as failed, naming the rate limit', async () => {
    server.reply(replies.rateLimited('3600'), replies.rateLimited('3600'));
    const credentials = new CredentialPool(['sk-1', 'sk-2'], 'TEST_API_KEYS');

    const error = await failureOf(runnerFor(format, { target: { credentials }, timer: new ManualTimer() }).run(request()));

    expect(error.message).toBe(
      `The provider test-${format} (model-1) failed: rate-limited: all 2 keys from TEST_API_KEYS are cooling down ` +
        '(the first is usable again in 3600 s); a call waits at most 600 s for a rate-limited provider.',
    );
    expect(server.requests).toHaveLength(2);
  });
});

describe('An agent session over the SDKs: fallbacks', () => {
  it('hands the conversation, tool results included, to a fallback of the other format', async () => {
    const search = new RecordingTool('web_search', () => 'sunny');
    server.reply(
      replies.toolCalls({ id: 'call_1', name: 'web_search', arguments: { query: 'weather' } }),
      replies.error(503, 'overloaded'),
      replies.text('Sunny.'),
    );
    const runner = sessionsOver([target('openai'), target('anthropic', { provider: 'backup', model: 'model-2' })], {
      tools: new FixedToolCatalog([search]),
    });

    const result = await runner.run(request());

    expect(result).toMatchObject({ text: 'Sunny.', answeredBy: 'backup (model-2)' });
    expect(search.calls).toHaveLength(1);
    const handedOver = server.requests[2]!;
    expect(handedOver.format).toBe('anthropic');
    expect(conversationOf(handedOver).slice(-2)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'web_search', input: { query: 'weather' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' }] },
    ]);
  });

  it('names every provider it tried when all fail', async () => {
    server.reply(replies.error(500, 'boom'), replies.error(502, 'bad gateway'));
    const runner = sessionsOver([target('openai'), target('anthropic', { provider: 'backup', model: 'model-2' })], {
      skippedFallbacks: ['The provider "spare" has no API key.'],
    });

    const error = await failureOf(runner.run(request()));

    expect(error.message).toBe(
      `Every provider failed: test-openai (model-1): ${server.openAiBaseUrl} answered HTTP 500: boom; ` +
        `backup (model-2): ${server.anthropicBaseUrl} answered HTTP 502: bad gateway. Not tried: The provider "spare" has no API key.`,
    );
  });
});
