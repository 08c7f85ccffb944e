import { ModelCallError, type ChatModel, type ModelTurnRequest } from '../../src/application/agent/ports/ChatModel.js';
import type { TranscriptMessage } from '../../src/domain/agent/transcript.js';
import { FakeLlmServer, replies, unreachableBaseUrl, type LlmWireFormat } from '../support/fakeLlmServer.js';

/**
 * What every ChatModel promises the session loop, whatever the wire format: one streamed turn
 * per call, text in order, tool calls with their raw arguments, every failure a ModelCallError
 * of the kind the provider chain decides on, no retry of its own, and an abort that ends the
 * call. Run against each SDK adapter through a local server that speaks its format.
 */
export function describeChatModelContract(name: string, format: LlmWireFormat, makeModel: (endpoint: string) => ChatModel): void {
  describe(`${name} (ChatModel contract)`, () => {
    let server: FakeLlmServer;

    beforeEach(async () => {
      server = await FakeLlmServer.start();
    });

    afterEach(() => server.close());

    const endpointOf = () => (format === 'openai' ? server.openAiBaseUrl : server.anthropicBaseUrl);

    function turnRequest(overrides: Partial<ModelTurnRequest> = {}): ModelTurnRequest {
      return {
        model: 'model-1',
        apiKey: 'sk-contract',
        system: null,
        messages: [{ role: 'user', text: 'What is the weather?' }],
        tools: [],
        signal: new AbortController().signal,
        onActivity: () => undefined,
        onText: () => undefined,
        ...overrides,
      };
    }

    it('reads the turn from the stream with its usage, cached input counted within the input', async () => {
      server.reply(
        replies.withUsage(replies.text('Hi.'), {
          input_tokens: 1500,
          output_tokens: 42,
          cached_input_tokens: 1000,
          cache_creation_input_tokens: 200,
        }),
      );

      const turn = await makeModel(endpointOf()).streamTurn(turnRequest());

      expect(turn.usage).toEqual({ input_tokens: 1500, output_tokens: 42, cached_input_tokens: 1000 });
    });

    it('reports no usage for a stream that carries none', async () => {
      server.reply(replies.withUsage(replies.text('Hi.'), null));

      const turn = await makeModel(endpointOf()).streamTurn(turnRequest());

      expect(turn.usage?.output_tokens ?? 0).toBe(0);
      expect(turn.usage?.input_tokens ?? 0).toBe(0);
    });

    async function failureOf(promise: Promise<unknown>): Promise<ModelCallError> {
      try {
        await promise;
      } catch (error) {
        if (error instanceof ModelCallError) return error;
        throw error;
      }
      throw new Error('expected the call to fail');
    }

    it('streams the answer in order, each event counted as activity, and returns it whole', async () => {
      server.reply(replies.text('Sun', 'ny ', 'today.'));
      const deltas: string[] = [];
      let activity = 0;

      const turn = await makeModel(endpointOf()).streamTurn(
        turnRequest({ onText: (delta) => deltas.push(delta), onActivity: () => (activity += 1) }),
      );

      expect(turn).toEqual({ text: 'Sunny today.', toolCalls: [], usage: { input_tokens: 12, output_tokens: 5, cached_input_tokens: 0 } });
      expect(deltas.join('')).toBe('Sunny today.');
      expect(activity).toBeGreaterThanOrEqual(3);
    });

    it('returns the tool calls of a turn with their ids, names and arguments as sent', async () => {
      server.reply(
        replies.toolCalls(
          { id: 'call_a', name: 'web_search', arguments: { query: 'rain' } },
          { id: 'call_b', name: 'clarify', arguments: '{"q": ' },
        ),
      );
      const tools = [
        { name: 'web_search', description: 'Search.', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
      ];

      const turn = await makeModel(endpointOf()).streamTurn(turnRequest({ tools }));

      expect(turn.toolCalls).toEqual([
        { id: 'call_a', name: 'web_search', arguments: '{"query":"rain"}' },
        { id: 'call_b', name: 'clarify', arguments: '{"q": ' },
      ]);
    });

    it('sends the model, the key, the system text, every message, tool results included, and the tools offered', async () => {
      server.reply(replies.text('ok'));
      const messages: TranscriptMessage[] = [
        { role: 'user', text: 'Find rain.' },
        { role: 'assistant', text: '', toolCalls: [{ id: 'call_1', name: 'web_search', arguments: '{"query":"rain"}' }] },
        { role: 'tool', results: [{ callId: 'call_1', name: 'web_search', content: 'RAIN-RESULT', isError: false }] },
      ];
      const tools = [{ name: 'web_search', description: 'Search the web.', parameters: { type: 'object', properties: {} } }];

      await makeModel(endpointOf()).streamTurn(turnRequest({ system: 'SYSTEM-TEXT', messages, tools }));

      const [sent] = server.requests;
      expect(sent!.format).toBe(format);
      expect(sent!.apiKey).toBe('sk-contract');
      expect(sent!.body.model).toBe('model-1');
      const body = JSON.stringify(sent!.body);
      for (const part of ['SYSTEM-TEXT', 'Find rain.', 'call_1', 'RAIN-RESULT', 'Search the web.']) expect(body).toContain(part);
    });

    it("sends a user message's images as image input in the provider's own form, beside its text", async () => {
      server.reply(replies.text('A red pixel.'));
      const image = { mediaType: 'image/png' as const, base64: 'iVBORw0KGgo=' };

      const turn = await makeModel(endpointOf()).streamTurn(
        turnRequest({ messages: [{ role: 'user', text: 'What is in it?', images: [image] }] }),
      );

      expect(turn.text).toBe('A red pixel.');
      const [message] = server.requests[0]!.body.messages as Array<{ role: string; content: unknown }>;
      expect(message!.role).toBe('user');
      expect(message!.content).toEqual(
        expect.arrayContaining([
          { type: 'text', text: 'What is in it?' },
          format === 'openai'
            ? { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }
            : { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ]),
      );
    });

    it('sends no key when the provider needs none', async () => {
      server.reply(replies.text('ok'));

      await makeModel(endpointOf()).streamTurn(turnRequest({ apiKey: null }));

      expect(server.requests[0]!.apiKey).toBeNull();
    });

    it.each([
      [429, 'rate_limited'],
      [401, 'auth'],
      [403, 'auth'],
      [404, 'rejected'],
      [400, 'rejected'],
      [500, 'server'],
      [503, 'server'],
    ] as const)('fails an HTTP %i as %s, once, without a retry of its own', async (status, kind) => {
      server.always = replies.error(status, `error ${status}`);

      const error = await failureOf(makeModel(endpointOf()).streamTurn(turnRequest()));

      expect(error.kind).toBe(kind);
      expect(error.details.status).toBe(status);
      expect(error.message).toMatch(/^[a-z]/);
      expect(server.requests).toHaveLength(1);
    });

    it('passes on how long a 429 asks to wait', async () => {
      server.reply(replies.rateLimited('7'));

      const error = await failureOf(makeModel(endpointOf()).streamTurn(turnRequest()));

      expect(error.details.retryAfterMs).toBe(7_000);
    });

    it('prefers retry-after-ms to Retry-After', async () => {
      server.reply(replies.rateLimitedMs(2_500, '7'));

      const error = await failureOf(makeModel(endpointOf()).streamTurn(turnRequest()));

      expect(error.details.retryAfterMs).toBe(2_500);
    });

    it('says once when a response started, before its first streamed event, and never for a refused call', async () => {
      server.reply(replies.text('Hi', ' there.'), replies.rateLimited('7'));
      const seen: string[] = [];
      const observing = turnRequest({
        onResponseStarted: () => seen.push('started'),
        onActivity: () => seen.push('activity'),
      });

      await makeModel(endpointOf()).streamTurn(observing);
      expect(seen[0]).toBe('started');
      expect(seen.filter((each) => each === 'started')).toHaveLength(1);
      expect(seen.length).toBeGreaterThan(1);

      seen.length = 0;
      await failureOf(makeModel(endpointOf()).streamTurn(observing));
      expect(seen).toEqual([]);
    });

    it('never quotes the key it was given', async () => {
      server.reply(replies.error(401, 'Incorrect API key provided: sk-contract'));

      const error = await failureOf(makeModel(endpointOf()).streamTurn(turnRequest()));

      expect(error.kind).toBe('auth');
      expect(error.message).not.toContain('sk-contract');
    });

    it("fails a stream that carries an error event as the server's failure, in the server's words", async () => {
      server.reply(replies.errorInStream('Overloaded, try again', 'Half an ans'));

      const error = await failureOf(makeModel(endpointOf()).streamTurn(turnRequest()));

      expect(error.kind).toBe('server');
      expect(error.message).toContain('reported an error in the middle of its answer: Overloaded, try again');
    });

    it('fails an endpoint that cannot be reached as unreachable, naming it', async () => {
      const nowhere = await unreachableBaseUrl();

      const error = await failureOf(makeModel(nowhere).streamTurn(turnRequest()));

      expect(error.kind).toBe('unreachable');
      expect(error.message).toContain(nowhere.replace(/\/v1$/, ''));
    });

    it('ends a stalled stream as aborted when the signal aborts', async () => {
      server.reply(replies.stall('Let me think'));
      const controller = new AbortController();

      const call = makeModel(endpointOf()).streamTurn(turnRequest({ signal: controller.signal, onText: () => controller.abort() }));

      expect((await failureOf(call)).kind).toBe('aborted');
    });
  });
}
