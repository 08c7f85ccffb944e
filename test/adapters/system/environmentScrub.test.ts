import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bundleScript } from '../../support/bundleScript.js';

const CREDENTIALS: Record<string, string> = {
  OPENAI_API_KEY: 'canary-openai-key',
  SLACK_BOT_TOKEN: 'canary-slack-token',
  TELEGRAM_BOT_TOKEN: 'canary-telegram-token',
  AGENT_DASHBOARD_TOKEN: 'canary-dashboard-token-0123456789',
  PGPASSWORD: 'canary-pg-password',
  PGPASSFILE: '/canary/pgpass',
  BILLING_SECRET: 'canary-custom-secret',
  DISCORD_BOT_TOKEN_FILE: '/canary/discord-token-file',
};
const OTHERS: Record<string, string> = {
  KEEP_ME: 'visible',
  // A value that looks like a credential's entry is not one: only whole names at an entry's start count.
  NOTE: 'OPENAI_API_KEY=not-a-key',
  TOKEN_COUNT: '3',
};

interface Report {
  environ: string;
  processEnv: Record<string, string>;
  held: Record<string, string>;
  has: Record<string, boolean>;
  childEnv: Record<string, string>;
  left: { names: string[]; reason: string | null };
}

const directory = mkdtempSync(join(tmpdir(), 'environment-scrub-'));
let script: string;

beforeAll(async () => {
  script = await bundleScript(fileURLToPath(new URL('../../support/environmentScrubChild.ts', import.meta.url)), directory);
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function runChild(platform?: string): Report {
  const child = spawnSync(process.execPath, [script, ...(platform ? [platform] : [])], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, ...CREDENTIALS, ...OTHERS },
    timeout: 60_000,
  });
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout) as Report;
}

// Skipped off Linux: the scrub writes the environment block through /proc/self/mem, which only Linux has
// (the fallback where it cannot is tested below).
const onLinux = process.platform === 'linux' ? describe : describe.skip;

onLinux('credentials taken out of a process’s environment', () => {
  it('are no longer shown in /proc/self/environ nor in process.env, and stay readable from the held environment', () => {
    const report = runChild();
    const environ = report.environ.split('\0').filter((entry) => entry !== '');
    for (const [name, value] of Object.entries(CREDENTIALS)) {
      expect(report.environ).not.toContain(value);
      expect(environ.some((entry) => entry.startsWith(`${name}=`))).toBe(false);
      expect(report.processEnv[name]).toBeUndefined();
      expect(report.childEnv[name]).toBeUndefined();
      expect(report.held[name]).toBe(value);
    }
    // The others are where they were, in each.
    for (const [name, value] of Object.entries(OTHERS)) {
      expect(environ).toContain(`${name}=${value}`);
      expect(report.processEnv[name]).toBe(value);
      expect(report.held[name]).toBe(value);
      expect(report.childEnv[name]).toBe(value);
    }
    // The held environment: a credential read from a file, one written later (never in process.env), a variable set later.
    expect(report.held.FROM_FILE_TOKEN).toBe('canary-read-from-a-file');
    expect(report.held.LATE_TOKEN).toBe('canary-late');
    expect(report.processEnv.LATE_TOKEN).toBeUndefined();
    expect(report.held.AGENT_OWNER_PROCESS).toBe('host:1');
    expect(report.childEnv.AGENT_OWNER_PROCESS).toBe('host:1');
    expect(report.has).toEqual({ OPENAI_API_KEY: true, AGENT_OWNER_PROCESS: true });
    expect(report.left).toEqual({ names: [], reason: null });
  });

  it('where the system’s copy cannot be cleared, are still taken out of process.env, and the rest is said: which, and why', () => {
    const report = runChild('darwin');
    for (const name of Object.keys(CREDENTIALS)) {
      expect(report.processEnv[name]).toBeUndefined();
      expect(report.childEnv[name]).toBeUndefined();
      expect(report.held[name]).toBe(CREDENTIALS[name]);
    }
    // The path of a credential's file is no secret: it is not among those said to be shown.
    expect(report.left.names).toEqual([
      'AGENT_DASHBOARD_TOKEN',
      'BILLING_SECRET',
      'OPENAI_API_KEY',
      'PGPASSFILE',
      'PGPASSWORD',
      'SLACK_BOT_TOKEN',
      'TELEGRAM_BOT_TOKEN',
    ]);
    expect(report.left.reason).toBe('the environment a process was started with is cleared on Linux only, not on darwin');
  });
});

describe('the environment block of a process that cannot write its /proc/self/mem', () => {
  it('is left as it is, and says which credentials it still shows and why', async () => {
    const { ProcSelfEnvironment } = await import('../../../src/adapters/system/environmentScrub.js');
    const { writeFileSync, mkdirSync } = await import('node:fs');
    const proc = join(directory, 'proc-without-mem');
    mkdirSync(proc);
    writeFileSync(join(proc, 'environ'), 'PATH=/usr/bin\0OPENAI_API_KEY=canary\0GH_TOKEN_FILE=/run/secrets/gh\0');
    writeFileSync(
      join(proc, 'stat'),
      '42 (node (a) b) S 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 4096 8192 12288 16384 20480 0\n',
    );
    const outcome = new ProcSelfEnvironment('linux', proc).clear((name) => name.endsWith('_API_KEY') || name.endsWith('_FILE'), []);
    expect(outcome).toEqual({ left: ['OPENAI_API_KEY', 'GH_TOKEN_FILE'], reason: `${proc}/mem cannot be written (ENOENT)` });
  });
});
