import { createHash } from 'node:crypto';
import { rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable, optional } from 'inversify';
import {
  BotChatDeliveryError,
  type BotChatDelivery,
  type BotChatReceipt,
  type BotChatRequest,
} from '../../application/ports/BotChatDelivery.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import { agentHomeFrom } from '../persistence/agentPaths.js';
import { PRIVATE_FILE_MODE } from '../persistence/fileSystem.js';
import { CappedOutput } from '../process/CappedOutput.js';
import { ChildProcessRunner } from '../process/ChildProcessRunner.js';
import { platformProcessTreeKiller } from '../process/platformProcessTreeKiller.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import { BOT_CHAT_TOKENS } from './tokens.js';
import {
  createRecordOnce,
  ensureMailbox,
  exists,
  liveOwner,
  mailboxOf,
  recordPath,
  rewriteRecord,
  type MailboxRecord,
} from './botChatMailbox.js';

/** The end of `agent chat`'s stderr kept for the failure, in bytes. */
const STDERR_KEPT = 2_000;

/** A run's bot-chat receipt id: sha256 of the compact JSON `[source_home, job_id, execution_id, target_home]`. */
export function receiptIdOf(sourceHome: string, jobId: string, executionId: string, targetHome: string): string {
  return createHash('sha256')
    .update(JSON.stringify([sourceHome, jobId, executionId, targetHome]))
    .digest('hex');
}

/**
 * Bot-chat delivery over the target home's mailbox (`runtime/bot_chat/`): the receipt is
 * reserved first (an existing one is refused, whatever lane wrote it), then a live owner gets it
 * `queued`; without one, `agent chat --profile <p> --create-if-missing --query-file <file>` runs
 * the turn here, bounded by `cron.bot_chat_delivery_timeout_seconds`.
 */
@injectable()
export class FileBotChatDelivery implements BotChatDelivery {
  private readonly timeoutMs: number;
  private readonly children: ChildProcessRunner;

  constructor(
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    @inject(CONFIG_TOKENS.AgentConfig) config: AgentConfig,
    @inject(CONFIG_TOKENS.Environment) private readonly env: NodeJS.ProcessEnv,
    /** The `agent` executable as a command line (node and the script), to run `agent chat`. */
    @inject(BOT_CHAT_TOKENS.AgentCommand) private readonly agentCommand: readonly string[],
    @inject(TOKENS.ProcessTreeKiller) @optional() killer?: ProcessTreeKiller,
  ) {
    this.children = new ChildProcessRunner(killer ?? platformProcessTreeKiller());
    this.timeoutMs = Math.round(config.cron.bot_chat_delivery_timeout_seconds * 1000);
  }

  async problemWith(profile: string | null): Promise<string | null> {
    if (profile === null) return null;
    const home = this.targetHome(profile);
    const found = await stat(home).then(
      (stats) => stats.isDirectory(),
      () => false,
    );
    return found
      ? null
      : `The bot-chat profile "${profile}" does not exist (${home}); create it with agent chat --profile ${profile} --create-if-missing.`;
  }

  async deliver(request: BotChatRequest): Promise<BotChatReceipt> {
    const targetHome = this.targetHome(request.profile);
    const receipt = receiptIdOf(this.paths.home, request.jobId, request.executionId, targetHome);
    const mailbox = mailboxOf(targetHome);
    try {
      await ensureMailbox(mailbox);
    } catch (error) {
      throw new BotChatDeliveryError(`Could not open the bot-chat mailbox ${mailbox} (${String(error)}); check that it is writable.`, {
        cause: error,
      });
    }
    // The receipt is checked before any owner is looked for: an existing one is never delivered again.
    if (await exists(recordPath(mailbox, receipt))) throw this.alreadyDelivered(receipt);
    const owner = await liveOwner(mailbox, Date.now());
    const now = new Date().toISOString();
    const record: MailboxRecord = {
      receipt,
      status: owner ? 'queued' : 'claimed',
      lane: owner ? 'owner' : 'command-line',
      job_id: request.jobId,
      job_name: request.jobName,
      execution_id: request.executionId,
      source_home: this.paths.home,
      target_home: targetHome,
      message: request.message,
      created_at: now,
      updated_at: now,
      error: null,
    };
    if (!(await createRecordOnce(mailbox, record))) throw this.alreadyDelivered(receipt);
    if (owner) return { lane: 'queued', receipt };
    const failure = await this.runChat(request.profile, mailbox, record);
    await rewriteRecord(mailbox, {
      ...record,
      status: failure ? 'failed' : 'settled',
      error: failure,
      updated_at: new Date().toISOString(),
    });
    if (failure) throw new BotChatDeliveryError(failure);
    return { lane: 'delivered', receipt };
  }

  private alreadyDelivered(receipt: string): BotChatDeliveryError {
    return new BotChatDeliveryError(
      `The bot-chat receipt ${receipt} already exists, so this run is not delivered again; look at that receipt instead.`,
    );
  }

  private targetHome(profile: string | null): string {
    return profile === null ? this.paths.home : join(agentHomeFrom(this.env), 'profiles', profile);
  }

  /** Runs the turn with `agent chat`; returns null on exit 0, else what went wrong. */
  private async runChat(profile: string | null, mailbox: string, record: MailboxRecord): Promise<string | null> {
    const queryFile = join(mailbox, `.${record.receipt}.query.tmp`);
    await writeFile(queryFile, record.message, { mode: PRIVATE_FILE_MODE });
    const [program, ...prefix] = this.agentCommand;
    const args = [
      ...prefix,
      'chat',
      ...(profile === null ? [] : ['--profile', profile, '--create-if-missing']),
      '--query-file',
      queryFile,
      // A delivery runs one turn; due jobs of the target home are its own ticks' business.
      '--no-tick',
    ];
    // `bot-chat` is this home; a profile lives under the top-level home.
    const home = profile === null ? this.paths.home : agentHomeFrom(this.env);
    const command = `agent chat${profile === null ? '' : ` --profile ${profile}`}`;
    const stderr = new CappedOutput(STDERR_KEPT, 'end');
    try {
      const end = await this.children.run({
        program: program!,
        args,
        env: { ...this.env, AGENT_HOME: home },
        stderr,
        timeoutMs: this.timeoutMs,
      });
      const detail = stderr.text().trim();
      switch (end.kind) {
        case 'not_started':
          return `${command} could not be started (${end.error.message}); check the agent installation.`;
        case 'stopped':
          return `${command} did not finish within ${Math.round(this.timeoutMs / 1000)} s (cron.bot_chat_delivery_timeout_seconds)${detail ? `: ${detail}` : ''}`;
        case 'exited':
          if (end.code === 0) return null;
          return `${command} exited with ${end.code === null ? `signal ${end.signal}` : `code ${end.code}`}${detail ? `: ${detail}` : ''}`;
      }
    } finally {
      await rm(queryFile, { force: true });
    }
  }
}
