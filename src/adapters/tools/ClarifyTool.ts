import { injectable } from 'inversify';
import type { Tool, ToolCallContext, ToolSpec } from '../../application/agent/ports/Tool.js';
import { ToolArguments } from './ToolArguments.js';

/**
 * `clarify`: what a model does when it would like to ask something. The runtime has no channel
 * to ask on in the middle of a turn, so the tool says how to go on: an unattended run (cron,
 * webhook) decides for itself and says what it assumed; an interactive session asks
 * the user in its reply and waits for the next message.
 */
@injectable()
export class ClarifyTool implements Tool {
  readonly spec: ToolSpec = {
    name: 'clarify',
    description:
      'Use when the task is ambiguous and you would ask a question before going on. ' +
      'The result tells you how to proceed in this session.',
    parameters: {
      type: 'object',
      properties: {
        question: { type: 'string', description: 'The question you would ask, as you would put it to the user.' },
      },
      required: ['question'],
      additionalProperties: false,
    },
  };

  async call(args: Record<string, unknown>, context: ToolCallContext): Promise<string> {
    const input = new ToolArguments('clarify', args);
    input.rejectUnknown(['question']);
    const question = input.requiredString('question', 'the question you would ask').trim();
    if (context.unattended) {
      return (
        'Nobody can answer questions in this run: it is unattended. Do not ask. Decide for yourself: ' +
        'take the most reasonable reading of the task, carry on, and say in your answer what you assumed ' +
        `about: ${question}`
      );
    }
    return (
      'Ask the user directly in your reply: end this turn with your question and wait for their next ' +
      `message before acting on it. The question: ${question}`
    );
  }
}
