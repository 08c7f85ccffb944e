import { labelOf, type ProviderLink } from '../../domain/agent/providerChain.js';
import type { ModelTurn, TranscriptImage, TranscriptMessage } from '../../domain/agent/transcript.js';
import { AgentRunError } from '../ports/AgentRunner.js';
import { ModelCallError } from './ports/ChatModel.js';
import type { ImageAnswer, ToolSpec } from './ports/Tool.js';

/** What one model call sends: the run's conversation, or a question of its own (about an image). */
export interface TurnInput {
  system: string | null;
  messages: readonly TranscriptMessage[];
  tools: readonly ToolSpec[];
  /** Whether the answer streams to the run's `onText`: only the run's own turns do. */
  streamsText: boolean;
}

export interface ImageQuestion {
  /** The run's current provider and model, and why it takes no images when the configuration says so. */
  target: ProviderLink & { noImages?: string };
  image: TranscriptImage;
  question: string;
  /** Makes the call to `target`, as the session makes its own (key rotation, idle budget). */
  ask: (input: TurnInput) => Promise<ModelTurn>;
  /** Whether the run itself was stopped: then the call's failure is the run's. */
  stopped: () => boolean;
}

/**
 * Asks the run's current model about one image in a call of its own: the question and the
 * image, no system text, no tools. It moves nothing down the chain; its failures are answers for
 * the vision tool to tell, so the run goes on, unless the run itself was stopped. A refused
 * request (HTTP 4xx but 401, 403, 408, 429) is taken as a model that does not take images.
 */
export async function askAboutImage({ target, image, question, ask, stopped }: ImageQuestion): Promise<ImageAnswer> {
  const model = labelOf(target);
  if (target.noImages) return { kind: 'no_images', model, problem: target.noImages };
  try {
    const messages: TranscriptMessage[] = [{ role: 'user', text: question, images: [image] }];
    const turn = await ask({ system: null, messages, tools: [], streamsText: false });
    return { kind: 'answer', text: turn.text };
  } catch (error) {
    if (stopped()) throw error;
    const cause = error instanceof AgentRunError && error.cause instanceof ModelCallError ? error.cause : error;
    if (cause instanceof ModelCallError && cause.kind === 'rejected') return { kind: 'no_images', model, problem: cause.message };
    return { kind: 'failed', model, problem: cause instanceof Error ? cause.message : String(cause) };
  }
}
