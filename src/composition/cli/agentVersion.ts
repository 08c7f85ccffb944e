import { readFileSync } from 'node:fs';

/** Set by scripts/build.mjs (esbuild `define`) to package.json's version; absent when run from source. */
declare const __AGENT_VERSION__: string | undefined;

/**
 * The version `agent --version` prints. The bundle has it built in, so start-up reads no file;
 * run from source (tests under ts-jest) it is read from package.json instead.
 */
export function agentVersion(): string {
  if (typeof __AGENT_VERSION__ === 'string') return __AGENT_VERSION__;
  try {
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
