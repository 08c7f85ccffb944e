import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { commandModelLines } from './configLines.js';
import {
  createJob,
  makeAgentHome,
  makeDue,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  writeHomeFile,
} from './agentCli.js';

/**
 * A credential given to the gateway in its environment is not in the environment the system
 * shows of it: a program the gateway starts, which knows the gateway's pid from
 * AGENT_OWNER_PROCESS, reads /proc/<that pid>/environ and finds none. The gateway itself still
 * uses them: the dashboard takes its token, the model program gets its key.
 */
const CREDENTIALS: Record<string, string> = {
  SLACK_BOT_TOKEN: 'xoxb-canary-slack-bot-token',
  SLACK_SIGNING_SECRET: 'canary-slack-signing-secret',
  TELEGRAM_BOT_TOKEN: '123456:canary-telegram-bot-token',
  AGENT_DASHBOARD_TOKEN: 'canary-dashboard-token-of-128-bits',
  OPENAI_API_KEY: 'sk-canary-openai-key',
  PGPASSWORD: 'canary-pg-password',
  BILLING_SECRET: 'canary-custom-secret',
};
const OTHERS: Record<string, string> = { CANARY_SETTING: 'visible-setting', NOTE: 'OPENAI_API_KEY=not-a-key' };

/**
 * The model: writes what it found to report.json beside itself: its own key, and the environment
 * of the process AGENT_OWNER_PROCESS names (the gateway), as a terminal command could read it.
 */
const PEEKING_MODEL = `
import { readFileSync, writeFileSync } from 'node:fs';
process.stdin.resume();
process.stdin.on('end', () => {
  const owner = process.env.AGENT_OWNER_PROCESS ?? '';
  const pid = owner.slice(owner.lastIndexOf(':') + 1);
  let ownerEnviron = null;
  try { ownerEnviron = readFileSync('/proc/' + pid + '/environ', 'latin1'); } catch (error) { ownerEnviron = 'unreadable: ' + error.code; }
  writeFileSync(new URL('report.json', import.meta.url), JSON.stringify({ owner, key: process.env.OPENAI_API_KEY ?? null, ownerEnviron }));
  process.stdout.write('peeked\\n');
});
`;

// Skipped off Linux: the environment is read from /proc/<pid>/environ, which only Linux has.
const onLinux = process.platform === 'linux' ? describe : describe.skip;

onLinux('the environment of the built gateway', () => {
  let home: string;
  let gateway: ChildProcess | null = null;

  beforeAll(requireBuiltAgent);
  afterEach(async () => {
    if (gateway?.exitCode === null) gateway.kill('SIGKILL');
    gateway = null;
    await removeAgentHome(home);
  });

  it('shows no credential to what it starts, and the gateway still uses them', async () => {
    home = await makeAgentHome();
    const model = await writeHomeFile(home, 'peek.mjs', PEEKING_MODEL);
    const ghTokenFile = await writeHomeFile(home, 'gh-token', 'canary-gh-token-in-a-file\n');
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      ['timezone: UTC', ...commandModelLines([process.execPath, model]), 'dashboard:', '  enabled: true', `  port: ${port}`, ''].join('\n'),
    );
    const id = await createJob(home, ['every 1h', 'Peek at the parent', '--name', 'peek', '--deliver', 'local']);
    await makeDue(home, id);

    const started = await startGatewayUntil(home, 'dashboard listening on', {
      env: { ...CREDENTIALS, ...OTHERS, GH_TOKEN_FILE: ghTokenFile },
      withinMs: 30_000,
    });
    gateway = started.gateway;
    const pid = gateway.pid!;

    const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    const entries = environ.split('\0').filter((entry) => entry !== '');
    for (const [name, value] of Object.entries(CREDENTIALS)) {
      expect(environ).not.toContain(value);
      expect(entries.some((entry) => entry.startsWith(`${name}=`))).toBe(false);
    }
    expect(environ).not.toContain('GH_TOKEN_FILE=');
    for (const [name, value] of Object.entries(OTHERS)) expect(entries).toContain(`${name}=${value}`);
    expect(entries).toContain(`AGENT_HOME=${home}`);

    // The dashboard takes the token the environment gave.
    const api = `http://127.0.0.1:${port}/api/jobs`;
    expect((await fetch(api, { headers: { authorization: `Bearer ${CREDENTIALS.AGENT_DASHBOARD_TOKEN}` } })).status).toBe(200);
    expect((await fetch(api, { headers: { authorization: 'Bearer not-the-token-of-128-bits' } })).status).toBe(401);

    // The run's model program: it has its key, and its parent's environment shows it nothing.
    const report = join(home, 'report.json');
    expect(await eventually(() => existsSync(report), 30_000)).toBe(true);
    const seen = JSON.parse(readFileSync(report, 'utf8')) as { owner: string; key: string | null; ownerEnviron: string };
    expect(seen.owner).toMatch(new RegExp(`:${pid}$`));
    expect(seen.key).toBe(CREDENTIALS.OPENAI_API_KEY);
    expect(seen.ownerEnviron).toContain('CANARY_SETTING=visible-setting');
    for (const value of [...Object.values(CREDENTIALS), ghTokenFile]) expect(seen.ownerEnviron).not.toContain(value);
    // Nothing said it could not hide them.
    expect(started.output()).not.toContain('cannot hide');
  });

  it('nor does agent cron run, to the run it starts', async () => {
    home = await makeAgentHome();
    const model = await writeHomeFile(home, 'peek.mjs', PEEKING_MODEL);
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...commandModelLines([process.execPath, model]), ''].join('\n'));
    const id = await createJob(home, ['every 1h', 'Peek at the parent', '--name', 'peek', '--deliver', 'local']);
    expect(await runAgent(['cron', 'run', id], { home, env: { ...CREDENTIALS, ...OTHERS } })).toMatchObject({ code: 0 });
    const seen = JSON.parse(readFileSync(join(home, 'report.json'), 'utf8')) as { key: string | null; ownerEnviron: string };
    expect(seen.key).toBe(CREDENTIALS.OPENAI_API_KEY);
    expect(seen.ownerEnviron).toContain('CANARY_SETTING=visible-setting');
    for (const value of Object.values(CREDENTIALS)) expect(seen.ownerEnviron).not.toContain(value);
  });
});
