import type { Logger } from '../../application/ports/Logger.js';
import { PosixProcessTreeKiller } from './PosixProcessTreeKiller.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import { WindowsProcessTreeKiller } from './WindowsProcessTreeKiller.js';

/** The process-tree killer of this platform: taskkill on Windows, the POSIX stop-and-sweep elsewhere. */
export function platformProcessTreeKiller(logger: Logger | null = null): ProcessTreeKiller {
  return process.platform === 'win32' ? new WindowsProcessTreeKiller({ logger }) : new PosixProcessTreeKiller({ logger });
}
