import { readFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import type { AskAgent } from '../../application/chat/AskAgent.js';
import type { RunDueJobs } from '../../application/cron/RunDueJobs.js';
import type { ConversationTurn } from '../../application/ports/AgentRunner.js';
import type { BotChatOwner, ClaimedBotChatMessage } from '../../application/ports/BotChatDelivery.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { CliError } from './CliError.js';
import { jsonFlag, readAll, writeJson, writeLine, type CliIO } from './CliIO.js';
import { CliUsageError } from './CliUsageError.js';
import { messageFor } from './errorReport.js';
import { cliFiringPath, type StartCliFiring } from './cliFiring.js';
import { commandInterruption } from './commandInterruption.js';
import { text } from './flagValues.js';

/** What `agent chat` needs, built for the chosen home (or profile) on first use. */
export interface ChatApp {
  askAgent: AskAgent;
  runDueJobs: RunDueJobs;
  /** Starts firing due jobs the one way every process does (a tick at the start, one every minute). */
  startFiring: StartCliFiring;
  /** The bot-chat mailbox of this home, owned while a conversation is open (docs/delivery.md). */
  botChatOwner: BotChatOwner;
}

/** How often an owning conversation looks into its mailbox, and renews its lease. */
const MAILBOX_POLL_MS = 500;
const LEASE_RENEW_MS = 10_000;

export interface ChatHomeChoice {
  profile: string | null;
  createIfMissing: boolean;
}

interface ChatFlags {
  q?: string;
  queryFile?: string;
  profile?: string;
  createIfMissing: boolean;
  provider?: string | null;
  model?: string | null;
  tick: boolean;
  json: boolean;
}

const EXIT_WORDS = new Set(['/exit', '/quit', 'exit', 'quit']);

/**
 * `agent chat`: one question (`-q`, `--query-file`) or, on a terminal, a conversation. The
 * session has every toolset, the job tool included. While it is open, due jobs fire: a tick at
 * the start and one every minute (CLI mode, docs/chat.md).
 */
export function registerChatCommand(yargs: Argv, app: (choice: ChatHomeChoice) => Promise<ChatApp>, io: CliIO): Argv {
  return yargs.command(
    'chat',
    'Talk to the agent: one question with -q, or a conversation on a terminal',
    (y) =>
      y
        .option('q', { alias: 'query', type: 'string', coerce: text('-q'), describe: 'Ask one question, print the answer and exit' })
        .option('query-file', {
          type: 'string',
          nargs: 1,
          coerce: text('--query-file'),
          describe: 'Read the question from a file ("-" for stdin)',
        })
        .option('profile', { type: 'string', coerce: text('--profile'), describe: 'Use $AGENT_HOME/profiles/<name> as the home' })
        .option('create-if-missing', { type: 'boolean', default: false, describe: 'Create the profile when it does not exist' })
        .option('provider', {
          type: 'string',
          coerce: text('--provider', { value: null, means: 'the provider from config.yaml' }),
          describe: 'Provider for this session (overrides config)',
        })
        .option('model', {
          type: 'string',
          coerce: text('--model', { value: null, means: 'the model from config.yaml' }),
          describe: 'Model for this session (overrides config)',
        })
        .option('tick', { type: 'boolean', default: true, describe: 'Fire due jobs during the session (--no-tick to skip)' })
        .option('json', jsonFlag('the answer to the one question (-q, --query-file), not streamed'))
        .conflicts('q', 'query-file'),
    async (argv) => {
      const flags = argv as unknown as ChatFlags;
      const question = await questionFrom(flags, io);
      if (question === null && flags.json) {
        throw new CliUsageError('--json prints the answer to one question; give it with -q "…" or --query-file FILE.');
      }
      if (question === null && !io.interactive) {
        throw new CliUsageError('agent chat needs a terminal for a conversation; give a question with -q "…" or --query-file FILE.');
      }
      const chat = await app({ profile: flags.profile ?? null, createIfMissing: flags.createIfMissing });
      // Stopped by a signal, the session's agent and the runs of due jobs end with their trees (exit 130, 143 or 129).
      commandInterruption.arm();
      const session = new ChatSession(chat, io, flags);
      if (question !== null) await session.answerOnce(question);
      else await session.converse();
    },
  );
}

async function questionFrom(flags: ChatFlags, io: CliIO): Promise<string | null> {
  if (flags.q !== undefined) return flags.q;
  if (flags.queryFile === undefined) return null;
  if (flags.queryFile === '-') return readAll(io.stdin);
  try {
    return await readFile(flags.queryFile, 'utf8');
  } catch (error) {
    throw new CliError(
      ERROR_CODES.CHAT.QUERY_FILE,
      `Could not read the question from ${flags.queryFile} (${(error as NodeJS.ErrnoException).code ?? String(error)}); check the path.`,
    );
  }
}

class ChatSession {
  private readonly conversation: ConversationTurn[] = [];
  /** Turns run one at a time, whether typed or delivered by a scheduled job. */
  private turns: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly chat: ChatApp,
    private readonly io: CliIO,
    private readonly flags: ChatFlags,
  ) {}

  /** One question: the answer on stdout; a failure is thrown (exit 1). */
  async answerOnce(question: string): Promise<void> {
    if (this.flags.tick) await (await this.startFiring({ kind: 'once' })).stop();
    if (!this.flags.json) {
      await this.ask(question, this.io.interactive);
      return;
    }
    const { answer, answeredBy } = await this.ask(question, false, { print: false });
    writeJson(this.io.stdout, { answer, answered_by: answeredBy });
  }

  /** A conversation on the terminal until /exit or end of input; failures are shown, not fatal. */
  async converse(): Promise<void> {
    // Loaded only for a conversation, so other commands do not pay for readline.
    const { createInterface } = await import('node:readline');
    const firing = this.flags.tick
      ? await this.startFiring({ kind: 'minute', onError: (error) => writeLine(this.io.stderr, messageFor(error, false)) })
      : null;
    writeLine(this.io.stderr, 'Chatting with the agent. Type /exit or press Ctrl-D to leave.');
    const terminal = createInterface({ input: this.io.stdin, output: this.io.stdout, terminal: true, prompt: 'you> ' });
    // Ctrl-C at the prompt is the stop signal it is elsewhere; a stop ends the conversation.
    terminal.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    commandInterruption.signal.addEventListener('abort', () => terminal.close(), { once: true });
    // A delivered turn may end after /exit closed the prompt: readline's prompt() would then resume
    // stdin, and the process would never exit. Only an open prompt is drawn again.
    let closed = false;
    terminal.once('close', () => (closed = true));
    const stopOwning = await this.ownMailbox(() => {
      if (!closed) terminal.prompt();
    });
    try {
      terminal.prompt();
      for await (const line of terminal) {
        const question = line.trim();
        if (EXIT_WORDS.has(question)) break;
        if (question !== '') await this.serially(() => this.turn(question));
        if (commandInterruption.signal.aborted) break;
        terminal.prompt();
      }
    } finally {
      terminal.close();
      await stopOwning();
      await firing?.stop();
    }
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turns.then(work);
    this.turns = next.catch(() => undefined);
    return next;
  }

  /**
   * Becomes the owner of this home's bot-chat mailbox while the conversation is open: each
   * delivery queued there is claimed, shown, run as a turn of this conversation and settled.
   * Returns what gives the mailbox up. Another live conversation that owns it already keeps it.
   */
  private async ownMailbox(reprompt: () => void): Promise<() => Promise<void>> {
    const owner = this.chat.botChatOwner;
    if (!(await owner.register().catch(() => false))) return async () => undefined;
    let looking = false;
    const look = async () => {
      if (looking) return;
      looking = true;
      try {
        const claimed = await owner.claimQueued((file) =>
          writeLine(this.io.stderr, `The bot-chat mailbox record ${file} is not valid JSON; it is left alone.`),
        );
        for (const delivery of claimed) await this.serially(() => this.deliveredTurn(delivery, reprompt));
      } catch (error) {
        writeLine(this.io.stderr, messageFor(error, false));
      } finally {
        looking = false;
      }
    };
    const poll = setInterval(() => void look(), MAILBOX_POLL_MS);
    const renew = setInterval(() => void owner.renew().catch(() => undefined), LEASE_RENEW_MS);
    return async () => {
      clearInterval(poll);
      clearInterval(renew);
      await this.turns;
      await owner.release().catch(() => undefined);
    };
  }

  private async deliveredTurn(delivery: ClaimedBotChatMessage, reprompt: () => void): Promise<void> {
    writeLine(this.io.stdout, '');
    writeLine(this.io.stdout, delivery.message);
    const error = await this.turn(delivery.message);
    await this.chat.botChatOwner.settle(delivery.receipt, error);
    reprompt();
  }

  /** One turn of the conversation; a failure is shown and returned, not thrown. */
  private async turn(question: string): Promise<string | null> {
    try {
      const { answer } = await this.ask(question, true);
      this.conversation.push({ role: 'user', content: question }, { role: 'assistant', content: answer });
      return null;
    } catch (error) {
      const message = messageFor(error, false);
      writeLine(this.io.stderr, message);
      return message;
    }
  }

  /**
   * Asks and shows the answer on stdout (unless `print` is false): streamed as it comes when
   * `streaming` and the runner streams, else printed whole at the end. Returns the answer.
   */
  private async ask(question: string, streaming: boolean, { print = true } = {}): Promise<{ answer: string; answeredBy: string }> {
    let streamed = false;
    const { answer, answeredBy } = await this.chat.askAgent.execute({
      question,
      conversation: [...this.conversation],
      provider: this.flags.provider ?? null,
      model: this.flags.model ?? null,
      // A chat started from inside a cron run (its terminal tool, say) may not reach jobs either.
      insideCronRun: Boolean(this.io.cronRun || this.io.sandboxed),
      signal: commandInterruption.signal,
      // A job made in a profile's chat delivers `origin` to that chat; one made in the home's own has none.
      origin: this.flags.profile ? { platform: 'bot-chat', chat_id: this.flags.profile, thread_id: null } : null,
      onText: streaming
        ? (delta) => {
            streamed = true;
            this.io.stdout.write(delta);
          }
        : undefined,
    });
    if (print) writeLine(this.io.stdout, streamed ? '' : answer);
    return { answer, answeredBy };
  }

  /** Fires due jobs through the built-in ticker; what ran goes to stderr so answers on stdout stay clean. */
  private startFiring(cadence: Parameters<StartCliFiring>[0]): ReturnType<StartCliFiring> {
    return this.chat.startFiring(cadence, cliFiringPath(this.chat.runDueJobs, this.io, { input: { signal: commandInterruption.signal } }));
  }
}
