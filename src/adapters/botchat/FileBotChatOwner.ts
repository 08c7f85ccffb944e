import { inject, injectable } from 'inversify';
import type { BotChatOwner, ClaimedBotChatMessage } from '../../application/ports/BotChatDelivery.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import {
  ensureMailbox,
  liveOwner,
  mailboxOf,
  OWNER_LEASE_MS,
  readRecords,
  removeOwner,
  rewriteRecord,
  writeOwner,
  type MailboxRecord,
} from './botChatMailbox.js';

/**
 * The owner side of this home's bot-chat mailbox (docs/delivery.md): `owner.json` names this
 * process and a lease it renews; queued records are claimed here and settled once their turn ran.
 */
@injectable()
export class FileBotChatOwner implements BotChatOwner {
  private readonly mailbox: string;
  private readonly claimed = new Map<string, MailboxRecord>();
  private readonly reported = new Set<string>();
  private registered = false;

  constructor(@inject(TOKENS.AgentPaths) paths: AgentPaths) {
    this.mailbox = mailboxOf(paths.home);
  }

  async register(): Promise<boolean> {
    await ensureMailbox(this.mailbox);
    const owner = await liveOwner(this.mailbox, Date.now());
    if (owner && owner.pid !== process.pid) return false;
    await this.renewLease();
    this.registered = true;
    return true;
  }

  async renew(): Promise<void> {
    if (this.registered) await this.renewLease();
  }

  async release(): Promise<void> {
    if (!this.registered) return;
    this.registered = false;
    await removeOwner(this.mailbox, process.pid);
  }

  async claimQueued(onUnreadable: (file: string) => void): Promise<ClaimedBotChatMessage[]> {
    const claimed: ClaimedBotChatMessage[] = [];
    for (const entry of await readRecords(this.mailbox)) {
      if (!entry.ok) {
        if (!this.reported.has(entry.file)) onUnreadable(entry.file);
        this.reported.add(entry.file);
        continue;
      }
      if (entry.record.status !== 'queued') continue;
      const record: MailboxRecord = { ...entry.record, status: 'claimed', updated_at: new Date().toISOString() };
      await rewriteRecord(this.mailbox, record);
      this.claimed.set(record.receipt, record);
      claimed.push({ receipt: record.receipt, jobName: record.job_name, message: record.message });
    }
    return claimed;
  }

  async settle(receipt: string, error: string | null): Promise<void> {
    const record = this.claimed.get(receipt);
    if (!record) return;
    this.claimed.delete(receipt);
    await rewriteRecord(this.mailbox, {
      ...record,
      status: error === null ? 'settled' : 'failed',
      error,
      updated_at: new Date().toISOString(),
    });
  }

  private async renewLease(): Promise<void> {
    await writeOwner(this.mailbox, { pid: process.pid, lease_expires_at: new Date(Date.now() + OWNER_LEASE_MS).toISOString() });
  }
}
