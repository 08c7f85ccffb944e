import type { PermitPool } from '../../domain/PermitPool.js';
import { basename } from 'node:path';
import { AgentRunError, type AgentRunRequest, type AgentRunResult, type RunSpend } from '../../application/ports/AgentRunner.js';
import { costOf, NO_PRICES, tokenCount, type PriceLookup } from '../../domain/runs/usage.js';
import type { RunContext } from '../../domain/RunContext.js';
import { CappedOutput } from '../process/CappedOutput.js';
import { ChildProcessRunner } from '../process/ChildProcessRunner.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import type { Sandbox } from '../../application/ports/Sandbox.js';

/** An answer larger than this is refused rather than delivered cut off. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** Enough stderr to explain a failure; the end is kept because that is where programs say why. */
const MAX_STDERR_BYTES = 64 * 1024;
/** How much of stderr goes into the error message, and so into `last_error` and notices. */
const MAX_STDERR_IN_MESSAGE = 2000;

export interface CommandAgentOptions {
  /** The program and its arguments, program first; run without a shell. */
  command: readonly string[];
  killer: ProcessTreeKiller;
  /** What `answeredBy` reports, e.g. `command:my-agent`. Default `command:<program>`. */
  answeredBy?: string;
  /**
   * The environment the program starts from; default this process's. The configured runner
   * passes it without the credentials a model program has no use for.
   */
  environment?: NodeJS.ProcessEnv;
  /** The sandbox it runs in, with the workspace it may write (docs/processes.md); none without. */
  sandbox?: { by: Sandbox; workspace: string };
  /** The process's permits (`agent.max_concurrent_processes`): the program starts once it holds one. */
  permits?: PermitPool;
}

/**
 * Runs an agent as a local program: one process per run, so every run is a fresh session.
 * The context goes to the program's stdin (see {@link formatContextForStdin}); its
 * stdout, without trailing whitespace, is the answer.
 *
 * The program's environment is `options.environment` (this process's by default), plus:
 * - `AGENT_PROVIDER` / `AGENT_MODEL`: the resolved selection, when set;
 * - `AGENT_TOOLSETS`: the toolsets the session may use, comma-separated (cron runs never
 *   include `cronjob`, and it is up to the program to honour the list).
 *
 * Activity is anything written to stdout or stderr: the idle budget restarts with each chunk,
 * which is the closest a plain program comes to "a tool call or a streamed token".
 *
 * Usage: none, unless the last line the program writes to stderr is a JSON object with `usage`
 * (docs/providers.md), e.g. `{"usage": {"input_tokens": 1200, "output_tokens": 80}}`; that line
 * is left out of error messages. Budgets do not stop a program: it reports only at its end.
 */
export class CommandAgentRunner {
  private readonly program: string;
  private readonly args: readonly string[];
  private readonly children: ChildProcessRunner;

  constructor(private readonly options: CommandAgentOptions) {
    this.children = new ChildProcessRunner(options.killer);
    const [program, ...args] = options.command;
    if (!program) throw new TypeError('CommandAgentRunner needs a command with at least the program.');
    this.program = program;
    this.args = args;
  }

  /**
   * Runs the program to its answer. Throws AgentRunError: `failed` (cannot start, non-zero exit,
   * answer too large), `idle_timeout` (no output for `request.idleTimeoutMs`; the whole process
   * tree is killed) or `aborted` (`request.signal` fired; killed likewise).
   */
  async run(request: AgentRunRequest, prices: PriceLookup = NO_PRICES): Promise<AgentRunResult> {
    if (request.signal?.aborted) {
      throw new AgentRunError('aborted', `The run was cancelled before "${this.program}" started.`);
    }
    const stdout = new CappedOutput(MAX_ANSWER_BYTES, 'start');
    const stderr = new CappedOutput(MAX_STDERR_BYTES, 'end');
    const end = await this.children.run({
      ...(this.options.permits ? { permits: this.options.permits } : {}),
      program: this.program,
      args: this.args,
      env: this.environmentFor(request),
      stdin: formatContextForStdin(request.context),
      stdout,
      stderr,
      idleTimeoutMs: request.idleTimeoutMs,
      signal: request.signal,
      // It starts in the job's working folder when the run has one, else (in the sandbox) its workspace: the one place it may write.
      ...(request.workingDirectory ? { cwd: request.workingDirectory } : {}),
      sandbox: this.options.sandbox && this.sandboxFor(request.workingDirectory ?? null),
    });
    const reported = reportedUsage(stderr.text());
    const spend = reported && this.spendOf(reported.usage, request, prices);
    switch (end.kind) {
      case 'not_started':
        throw this.startError(end.error);
      case 'stopped':
        // Only the idle budget and the signal can stop it; there is no overall timeout.
        if (end.reason === 'idle') throw this.idleTimeoutError(request.idleTimeoutMs ?? 0);
        throw new AgentRunError('aborted', `The run was cancelled; the agent program "${this.program}" was stopped.`);
      case 'exited':
        if (end.code !== 0) {
          const error = this.exitError(end.code, end.signal, reported ? reported.rest : stderr.text());
          if (spend) error.spend = spend;
          throw error;
        }
        if (stdout.truncated) throw this.tooLargeError();
        return { text: stdout.text().trimEnd(), answeredBy: this.options.answeredBy ?? `command:${this.program}`, ...spend };
    }
  }

  private sandboxFor(workingDirectory: string | null): NonNullable<CommandAgentOptions['sandbox']> & { startIn: string } {
    const sandbox = this.options.sandbox!;
    const workspace = workingDirectory ?? sandbox.workspace;
    return { ...sandbox, workspace, startIn: workspace };
  }

  /** The reported usage, priced as `<provider>/<model>` of the run's selection. */
  private spendOf(usage: RunSpend['usage'], request: AgentRunRequest, prices: PriceLookup): RunSpend {
    const provider = request.selection.provider ?? 'command';
    const model = request.selection.model ?? basename(this.program);
    return { usage, costUsd: costOf([{ provider, model, ...usage }], prices) };
  }

  private environmentFor(request: AgentRunRequest): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...(this.options.environment ?? process.env), AGENT_TOOLSETS: request.toolsets.join(',') };
    delete env.AGENT_PROVIDER;
    delete env.AGENT_MODEL;
    if (request.selection.provider) env.AGENT_PROVIDER = request.selection.provider;
    if (request.selection.model) env.AGENT_MODEL = request.selection.model;
    return { ...env, ...request.environment };
  }

  private idleTimeoutError(idleTimeoutMs: number): AgentRunError {
    const seconds = Number((idleTimeoutMs / 1000).toFixed(3));
    return new AgentRunError(
      'idle_timeout',
      `idle timeout: no output for ${seconds} s; the agent program "${this.program}" and everything it started ` +
        'were killed (raise AGENT_CRON_TIMEOUT, or set it to 0 for no limit).',
    );
  }

  private startError(error: NodeJS.ErrnoException): AgentRunError {
    if (error.code === 'ESANDBOX')
      return new AgentRunError('failed', `The agent program "${this.program}" was not started: ${error.message}`, { cause: error });
    const problem =
      error.code === 'ENOENT'
        ? `the agent program "${this.program}" was not found; check the configured command and PATH`
        : error.code === 'EACCES'
          ? `the agent program "${this.program}" may not be executed (permission denied); check its file mode`
          : `the agent program "${this.program}" could not be started (${error.message})`;
    return new AgentRunError('failed', `${capitalize(problem)}.`, { cause: error });
  }

  private exitError(code: number | null, signal: NodeJS.Signals | null, stderrText: string): AgentRunError {
    const how = code !== null ? `exited with code ${code}` : `was killed by signal ${signal ?? 'unknown'}`;
    const detail = lastCharacters(stderrText.trim(), MAX_STDERR_IN_MESSAGE);
    return new AgentRunError(
      'failed',
      detail
        ? `The agent program "${this.program}" ${how}: ${detail}`
        : `The agent program "${this.program}" ${how} and wrote nothing to stderr.`,
    );
  }

  private tooLargeError(): AgentRunError {
    return new AgentRunError(
      'failed',
      `The agent program "${this.program}" wrote more than ${MAX_ANSWER_BYTES / (1024 * 1024)} MiB to stdout; ` +
        'the answer was refused rather than delivered cut off.',
    );
  }
}

/**
 * The context as the program reads it on stdin: memory documents, then each skill in list
 * order, then each further document (a job folder's AGENTS.md, answers carried forward, under
 * their own names), then the task. Each section is a level-1 heading line, a blank line and
 * the content without trailing whitespace; sections are separated by one blank line:
 *
 * ```text
 * # Memory: MEMORY.md
 *
 * <content of MEMORY.md>
 *
 * # Skill: <skill name>
 *
 * <content of its SKILL.md>
 *
 * # Task
 *
 * <preamble, script block and job prompt>
 * ```
 *
 * Programs that want the parts apart split on the lines that start with `# Memory: `,
 * `# Skill: ` and the final `# Task`; content may contain headings of its own, so the last
 * `# Task` line is the one that counts.
 */
export function formatContextForStdin(context: RunContext): string {
  const sections = [
    ...context.system.map((document) => section(`Memory: ${document.name}`, document.content)),
    ...context.skills.map((skill) => section(`Skill: ${skill.name}`, skill.content)),
    ...(context.documents ?? []).map((document) => section(document.name, document.content)),
    section('Task', context.task),
  ];
  return `${sections.join('\n\n')}\n`;
}

/**
 * The usage a program reported on the last line of its stderr, `{"usage": {…}}` (counts it leaves
 * out are 0; `model_turns` defaults to 1), and its stderr without that line; null when it reported none.
 */
export function reportedUsage(stderrText: string): { usage: RunSpend['usage']; rest: string } | null {
  const trimmed = stderrText.trimEnd();
  const start = trimmed.lastIndexOf('\n') + 1;
  const line = trimmed.slice(start).trim();
  if (!line.startsWith('{')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  const usage = (parsed as { usage?: unknown } | null)?.usage;
  if (typeof usage !== 'object' || usage === null) return null;
  const counts = usage as Record<string, unknown>;
  return {
    usage: {
      input_tokens: tokenCount(counts.input_tokens),
      output_tokens: tokenCount(counts.output_tokens),
      cached_input_tokens: tokenCount(counts.cached_input_tokens),
      model_turns: counts.model_turns === undefined ? 1 : tokenCount(counts.model_turns),
      tool_calls: tokenCount(counts.tool_calls),
    },
    rest: trimmed.slice(0, start),
  };
}

function section(heading: string, content: string): string {
  return `# ${heading}\n\n${content.trimEnd()}`;
}

function lastCharacters(text: string, limit: number): string {
  return text.length <= limit ? text : `…${text.slice(text.length - limit + 1)}`;
}

function capitalize(sentence: string): string {
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}
