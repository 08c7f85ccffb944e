import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChatReceiverLease } from '../../application/ports/InboundChat.js';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE } from '../persistence/fileSystem.js';
import { tryLockFile } from '../persistence/fileLock.js';

/**
 * The receiving role among gateways sharing one `$AGENT_HOME`: the kernel's lock on
 * `chat/receiver.lock`, held for as long as the holder keeps the file open, so the kernel frees it
 * the moment the holder dies (docs/adr/0008-kernel-file-locks.md). Nothing can take it from a
 * live holder, so it is never lost.
 */
export class FileChatReceiverLease implements ChatReceiverLease {
  private held: FileHandle | null = null;

  constructor(private readonly home: string) {}

  async tryTake(): Promise<boolean> {
    if (this.held) return true;
    const directory = join(this.home, 'chat');
    await ensurePrivateDirectory(directory);
    const handle = await open(join(directory, 'receiver.lock'), 'a+', PRIVATE_FILE_MODE);
    try {
      if (await tryLockFile(handle)) {
        this.held = handle;
        return true;
      }
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
    await handle.close();
    return false;
  }

  async release(): Promise<void> {
    const handle = this.held;
    this.held = null;
    await handle?.close().catch(() => undefined);
  }
}
