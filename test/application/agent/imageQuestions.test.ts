import { askAboutImage, type TurnInput } from '../../../src/application/agent/imageQuestions.js';
import { ModelCallError } from '../../../src/application/agent/ports/ChatModel.js';
import { AgentRunError } from '../../../src/application/ports/AgentRunner.js';
import type { ModelTurn } from '../../../src/domain/agent/transcript.js';

const image = { mediaType: 'image/png' as const, base64: 'iVBORw0KGgo=' };
const target = { provider: 'local', model: 'llava' };

function question(ask: (input: TurnInput) => Promise<ModelTurn>, overrides: { stopped?: boolean; noImages?: string } = {}) {
  return askAboutImage({
    target: { ...target, ...(overrides.noImages ? { noImages: overrides.noImages } : {}) },
    image,
    question: 'What is it?',
    ask,
    stopped: () => overrides.stopped ?? false,
  });
}

describe('askAboutImage', () => {
  it('asks with the question and the image alone, no system text, no tools, nothing streamed', async () => {
    const asked: TurnInput[] = [];

    const answer = await question(async (input) => {
      asked.push(input);
      return { text: 'A cat.', toolCalls: [] };
    });

    expect(answer).toEqual({ kind: 'answer', text: 'A cat.' });
    expect(asked).toEqual([
      { system: null, messages: [{ role: 'user', text: 'What is it?', images: [image] }], tools: [], streamsText: false },
    ]);
  });

  it('asks nothing of a model configured to take no images', async () => {
    let calls = 0;

    const answer = await question(
      async () => {
        calls += 1;
        return { text: 'A cat.', toolCalls: [] };
      },
      { noImages: 'providers.local.vision is false in the configuration' },
    );

    expect(answer).toEqual({ kind: 'no_images', model: 'local (llava)', problem: 'providers.local.vision is false in the configuration' });
    expect(calls).toBe(0);
  });

  it('takes a refused request as a model that does not take images, and any other failure as a failed call', async () => {
    const refused = new ModelCallError('rejected', 'http://x refused the request (HTTP 400: no images)', { status: 400 });
    const ending = new AgentRunError('failed', 'The provider local (llava) failed: …', { cause: refused });

    expect(await question(() => Promise.reject(ending))).toEqual({ kind: 'no_images', model: 'local (llava)', problem: refused.message });
    expect(await question(() => Promise.reject(new Error('could not reach http://x (ECONNREFUSED)')))).toEqual({
      kind: 'failed',
      model: 'local (llava)',
      problem: 'could not reach http://x (ECONNREFUSED)',
    });
  });

  it("lets the run's own stop through", async () => {
    const stop = new ModelCallError('aborted', 'the run was stopped');

    await expect(question(() => Promise.reject(stop), { stopped: true })).rejects.toBe(stop);
  });
});
