import { RunAgentSession, type ProviderTarget } from '../../../src/application/agent/RunAgentSession.js';
import type { AgentRunRequest } from '../../../src/application/ports/AgentRunner.js';
import { CredentialPool } from '../../../src/domain/agent/CredentialPool.js';
import { FakeChatModel, turns } from '../../support/fakes/FakeChatModel.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { failureOf, sampleRunRequest } from '../../support/agentRuns.js';
import { FixedToolCatalog, RecordingTool } from '../../support/scriptedTools.js';

/* The transcript a session keeps: its turns and tool calls, timed, scrubbed and cut. */

const SECRET = 'sk-transcript-secret-42';

function provider(model: FakeChatModel): ProviderTarget {
  return {
    provider: 'primary',
    model: 'model-1',
    chatModel: async () => model,
    credentials: new CredentialPool(['sk-1'], 'TEST_API_KEY'),
    keyHelp: 'TEST_API_KEY',
  };
}

function setUp(tools: RecordingTool[], maxToolRounds?: number) {
  const clock = new ManualClock('2026-12-02T10:00:00.000Z');
  const session = new RunAgentSession({
    tools: new FixedToolCatalog(tools),
    timer: new ManualTimer(),
    maxToolRounds,
    transcript: { clock, secrets: [{ name: 'OPENAI_API_KEY', value: SECRET }] },
  });
  const run = (model: FakeChatModel, request: Partial<AgentRunRequest> = {}) =>
    session.execute({ request: sampleRunRequest(request), chain: [provider(model)] });
  return { clock, run };
}

describe('RunAgentSession: the transcript', () => {
  it('holds each model turn and each tool call in order, with their arguments, results and times', async () => {
    const moved: { clock?: ManualClock } = {};
    const terminal = new RecordingTool('terminal', () => {
      moved.clock!.advance(1500);
      return 'hello from the shell';
    });
    const model = new FakeChatModel(
      turns.tools({ name: 'terminal', arguments: { command: 'echo hello' }, id: 'call_a' }),
      turns.answer('Done.'),
    );
    const setup = setUp([terminal]);
    moved.clock = setup.clock;

    const result = await setup.run(model);

    expect(result.transcript).toEqual([
      {
        type: 'model_turn',
        started_at: '2026-12-02T10:00:00.000Z',
        ended_at: '2026-12-02T10:00:00.000Z',
        model: 'primary (model-1)',
        text: '',
        tool_calls: [{ id: 'call_a', name: 'terminal', arguments: '{"command":"echo hello"}' }],
      },
      {
        type: 'tool_call',
        started_at: '2026-12-02T10:00:00.000Z',
        ended_at: '2026-12-02T10:00:01.500Z',
        call_id: 'call_a',
        name: 'terminal',
        arguments: '{"command":"echo hello"}',
        result: 'hello from the shell',
        result_bytes: 20,
        cut: null,
        is_error: false,
      },
      {
        type: 'model_turn',
        started_at: '2026-12-02T10:00:01.500Z',
        ended_at: '2026-12-02T10:00:01.500Z',
        model: 'primary (model-1)',
        text: 'Done.',
        tool_calls: [],
      },
    ]);
  });

  it('scrubs credential values from tool results, tool arguments and turn text, and cuts long results to 4 KB', async () => {
    const terminal = new RecordingTool('terminal', () => `KEY=${SECRET}\n${'z'.repeat(5000)}`);
    const model = new FakeChatModel(
      turns.tools({ name: 'terminal', arguments: { command: `echo ${SECRET}` } }),
      turns.answer(`The key is ${SECRET}.`),
    );

    const result = await setUp([terminal]).run(model);

    const text = JSON.stringify(result.transcript);
    expect(text).not.toContain(SECRET);
    expect(text).toContain('[redacted OPENAI_API_KEY]');
    const call = result.transcript!.find((entry) => entry.type === 'tool_call')!;
    expect(call.type === 'tool_call' && call.result.startsWith('KEY=[redacted OPENAI_API_KEY]\nzzz')).toBe(true);
    expect(call.type === 'tool_call' && Buffer.byteLength(call.result)).toBe(4096);
    expect(call.type === 'tool_call' && call.cut).toBe('934 of 5,030 bytes cut: the result is kept to its first 4 KB');
  });

  it('keeps the transcript so far on a run that fails', async () => {
    const search = new RecordingTool('web_search', () => 'more');
    const model = new FakeChatModel(turns.tools({ name: 'web_search' }), turns.tools({ name: 'web_search' }));

    const failure = await failureOf(setUp([search], 1).run(model));

    expect(failure.transcript?.map((entry) => entry.type)).toEqual(['model_turn', 'tool_call', 'model_turn']);
  });

  it('keeps none without transcript settings', async () => {
    const session = new RunAgentSession({ tools: new FixedToolCatalog([]), timer: new ManualTimer() });

    const result = await session.execute({ request: sampleRunRequest({}), chain: [provider(new FakeChatModel(turns.answer('ok')))] });

    expect(result.transcript).toBeUndefined();
  });

  it('tells the request after each model turn and each tool call what the transcript holds so far', async () => {
    const terminal = new RecordingTool('terminal', () => 'hello');
    const model = new FakeChatModel(
      turns.tools({ name: 'terminal', arguments: { command: 'echo hello' }, id: 'call_a' }),
      turns.answer('Done.'),
    );
    const grown: string[][] = [];

    const result = await setUp([terminal]).run(model, {
      onTranscript: (transcript) => grown.push(transcript.map((entry) => entry.type)),
    });

    expect(grown).toEqual([['model_turn'], ['model_turn', 'tool_call'], ['model_turn', 'tool_call', 'model_turn']]);
    expect(result.transcript).toHaveLength(3);
  });
});
