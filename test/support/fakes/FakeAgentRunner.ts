import {
  AgentRunError,
  type AgentRunRequest,
  type AgentRunResult,
  type AgentRunner,
  type ModelSelection,
} from '../../../src/application/ports/AgentRunner.js';
import type { RunTranscript } from '../../../src/domain/runs/RunTranscript.js';

type Reply = string | AgentRunError | ((request: AgentRunRequest) => Promise<string> | string);

/** An agent that answers from a script of replies and records every request. */
export class FakeAgentRunner implements AgentRunner {
  readonly requests: AgentRunRequest[] = [];
  configured = true;
  knownProviders = new Set(['command']);
  private replies: Reply[] = [];
  defaultReply: Reply = 'All good.';
  /** The transcript every answer comes with; none when unset. */
  transcript: RunTranscript | undefined;
  /** What each answered run reports it spent; null (the default): nothing. */
  spend: { usage: NonNullable<AgentRunResult['usage']>; costUsd: number | null } | null = null;

  reply(...replies: Reply[]): this {
    this.replies.push(...replies);
    return this;
  }

  problemWith(selection: ModelSelection): string | null {
    if (!this.configured) return 'No model is configured; set model.provider in config.yaml.';
    if (selection.provider && !this.knownProviders.has(selection.provider)) {
      return `The provider "${selection.provider}" is not configured.`;
    }
    return null;
  }

  async run(request: AgentRunRequest): Promise<AgentRunResult> {
    this.requests.push(request);
    const reply = this.replies.shift() ?? this.defaultReply;
    if (reply instanceof AgentRunError) throw reply;
    const text = typeof reply === 'function' ? await reply(request) : reply;
    return {
      text,
      answeredBy: 'fake',
      ...(this.transcript ? { transcript: this.transcript } : {}),
      ...(this.spend ? { usage: { ...this.spend.usage }, costUsd: this.spend.costUsd } : {}),
    };
  }
}
