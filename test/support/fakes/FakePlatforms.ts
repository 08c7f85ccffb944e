import type { DirectoryChannel } from '../../../src/domain/delivery/channelDirectory.js';
import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../../src/application/ports/PlatformSender.js';
import type { Platforms, PlatformStatus } from '../../../src/application/ports/Platforms.js';

/** A sender that records what it was asked to send and fails as told. */
export class RecordingSender implements PlatformSender {
  readonly sent: Array<{ to: ChatAddress; text: string; key: string }> = [];
  readonly failures: Array<PlatformSendError | Error> = [];
  channels: DirectoryChannel[] = [];

  constructor(
    readonly platform: string,
    readonly partLimit: number | null = 100,
  ) {}

  async send(to: ChatAddress, text: string, key: string): Promise<SentPart> {
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.sent.push({ to, text, key });
    return { messageId: `m${this.sent.length}` };
  }

  async listChannels(): Promise<DirectoryChannel[]> {
    const failure = this.failures.shift();
    if (failure) throw failure;
    return this.channels;
  }
}

/** Platforms whose statuses a test sets directly; `sender()` hands out RecordingSenders. */
export class FakePlatforms implements Platforms {
  readonly senders = new Map<string, RecordingSender>();
  private readonly table = new Map<string, PlatformStatus>();

  constructor(statuses: Array<Partial<PlatformStatus> & { platform: string }>) {
    for (const status of statuses) {
      this.table.set(status.platform, {
        configured: true,
        missing: [],
        homeChannel: null,
        aliases: {},
        listsChannels: false,
        ...status,
      });
    }
  }

  /** Platform → why its API cannot address a thread; set by a test. */
  readonly threadProblems = new Map<string, string>();

  statuses(): PlatformStatus[] {
    return [...this.table.values()];
  }

  addressProblem(platform: string, address: ChatAddress): string | null {
    return address.threadId === null ? null : (this.threadProblems.get(platform) ?? null);
  }

  status(platform: string): PlatformStatus | null {
    return this.table.get(platform) ?? null;
  }

  senderOf(platform: string): RecordingSender {
    let sender = this.senders.get(platform);
    if (!sender) {
      sender = new RecordingSender(platform);
      this.senders.set(platform, sender);
    }
    return sender;
  }

  async sender(platform: string): Promise<PlatformSender> {
    if (!this.table.get(platform)?.configured) throw new Error(`${platform} is not configured`);
    return this.senderOf(platform);
  }
}

export { PlatformSendError };
