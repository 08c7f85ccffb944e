import { basename } from 'node:path';
import { inject, injectable, optional } from 'inversify';
import {
  AgentRunError,
  type AgentRunRequest,
  type AgentRunResult,
  type AgentRunner,
  type ModelSelection,
} from '../../application/ports/AgentRunner.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import { ProcessGroupKiller, type ProcessTreeKiller } from '../process/ProcessTreeKiller.js';
import { PROCESS_TOKENS } from '../process/tokens.js';
import { displayPath } from '../shared/displayPath.js';
import { CommandAgentRunner } from './CommandAgentRunner.js';

/** The provider a selection comes down to, or why there is none. */
type Resolution =
  | { ready: true; provider: string; model: string | null; command: readonly string[] }
  | { ready: false; problem: string };

/** The provider name that means "the program in `model.command`". */
const BUILT_IN_COMMAND_PROVIDER = 'command';

/**
 * The AgentRunner of the whole configuration. A selection's null fields fall back to the
 * config's `model.provider` and `model.name`; the provider is then
 * - `command`: the program in `model.command`, unless `providers.command` is defined, which wins;
 * - a name under `providers` with `type: command`: the program in its `command`;
 * - a name under `providers` with `type: openai` or `anthropic`: not available in this version
 *   (those arrive with the LLM runtime), reported by `problemWith`.
 * Runs are delegated to a CommandAgentRunner, one fresh process per run.
 */
@injectable()
export class ConfiguredAgentRunner implements AgentRunner {
  constructor(
    @inject(CONFIG_TOKENS.AgentConfig) private readonly config: AgentConfig,
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    // Optional so that wiring works before a better tree killer exists (spec rule 10).
    @inject(PROCESS_TOKENS.ProcessTreeKiller)
    @optional()
    private readonly killer: ProcessTreeKiller = new ProcessGroupKiller(),
  ) {}

  /** Why a run with this selection cannot start, as one sentence saying what to change; null when it can. */
  problemWith(selection: ModelSelection): string | null {
    const resolution = this.resolve(selection);
    return resolution.ready ? null : resolution.problem;
  }

  /**
   * Runs one fresh session with the resolved provider. Throws AgentRunError `failed` with the
   * `problemWith` sentence when the selection cannot run, else whatever the command run throws.
   */
  async run(request: AgentRunRequest): Promise<AgentRunResult> {
    const resolution = this.resolve(request.selection);
    if (!resolution.ready) throw new AgentRunError('failed', resolution.problem);
    const program = basename(resolution.command[0]!);
    const runner = new CommandAgentRunner({
      command: resolution.command,
      killer: this.killer,
      answeredBy: `${resolution.provider}:${program}${resolution.model ? ` (${resolution.model})` : ''}`,
    });
    return runner.run({ ...request, selection: { provider: resolution.provider, model: resolution.model } });
  }

  private get configFile(): string {
    return displayPath(this.paths.configFile);
  }

  private resolve(selection: ModelSelection): Resolution {
    const provider = selection.provider ?? this.config.model?.provider ?? null;
    // The configured model name belongs to the configured provider; another provider gets its own default.
    const inheritsModel = selection.provider === null || selection.provider === this.config.model?.provider;
    const model = selection.model ?? (inheritsModel ? this.config.model?.name : null) ?? null;
    if (provider === null) return { ready: false, problem: this.noModelProblem() };

    const named = Object.hasOwn(this.config.providers, provider) ? this.config.providers[provider] : undefined;
    if (named) {
      if (named.type !== 'command') {
        return {
          ready: false,
          problem:
            `The provider "${provider}" has type "${named.type}", which arrives with the LLM runtime and is not ` +
            `available in this version; use a provider of type "command" in ${this.configFile}.`,
        };
      }
      if (!named.command) {
        return {
          ready: false,
          problem: `The provider "${provider}" has no command; add "command: [my-agent]" under providers.${provider} in ${this.configFile}.`,
        };
      }
      return { ready: true, provider, model, command: named.command };
    }

    if (provider === BUILT_IN_COMMAND_PROVIDER) {
      const command = this.config.model?.command;
      if (!command) {
        return {
          ready: false,
          problem: `The provider "command" needs the program to run; add "command: [my-agent]" under model in ${this.configFile}.`,
        };
      }
      return { ready: true, provider, model, command };
    }

    return {
      ready: false,
      problem:
        `The provider "${provider}" is not defined; define it under providers.${provider} in ${this.configFile} ` +
        '(for example with "type: command" and "command: [my-agent]").',
    };
  }

  private noModelProblem(): string {
    if (this.config.model) {
      return `No model provider is configured; add "provider: command" and "command: [my-agent]" under model in ${this.configFile}.`;
    }
    return `No model is configured; add "model: {provider: command, command: [my-agent]}" to ${this.configFile}.`;
  }
}
