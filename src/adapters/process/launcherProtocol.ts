/** How the gateway and its launcher (launcherMain.ts) talk: requests and events over the IPC channel, and the header of each stream's socket. */

/** What the gateway asks, over the IPC channel. */
export interface LaunchRequest {
  id: number;
  program: string;
  args: string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Which of stdin, stdout and stderr go to the gateway (the rest to /dev/null). */
  stdio: [boolean, boolean, boolean];
  /** The gateway's Unix socket the streams connect to. */
  socket: string;
}

/** What this process tells the gateway. */
export type LaunchEvent =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'error'; id: number; error: { message: string; code?: string; errno?: number; syscall?: string; path?: string } }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };

/** The first bytes on each stream's socket: which child and which stream (`<id, 12 digits><0|1|2>\n`). */
export const STREAM_HEADER_BYTES = 14;
export const streamHeader = (id: number, stream: number): string => `${String(id).padStart(12, '0')}${stream}\n`;
