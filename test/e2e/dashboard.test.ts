import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { freePort } from '../support/freePort.js';
import { createJob, errorSentence, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil } from './agentCli.js';

const TOKEN = 'e2e-dashboard-token-of-128-bits';

/** A signed-in session of the dashboard at `base`: its cookie and the CSRF token of `path`. */
async function signIn(base: string, path: string): Promise<{ cookie: string; csrf: string }> {
  const signedIn = await fetch(`${base}/sign-in`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual' });
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
  const page = await (await fetch(`${base}${path}`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
}

/** A request to the dashboard on 127.0.0.1:`port` with the Host header `host` (fetch always sends the real one). */
function requestAs(
  port: number,
  host: string,
  path: string,
  method = 'GET',
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: '127.0.0.1', port, path, method, headers: { host, 'content-type': 'application/json' } }, (answer) => {
      let body = '';
      answer.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      answer.on('end', () => resolve({ status: answer.statusCode!, body, headers: answer.headers }));
    });
    sent.on('error', reject);
    sent.end(method === 'POST' ? JSON.stringify({ schedule: 'every 1h', prompt: 'Rebound' }) : undefined);
  });
}

describe('the dashboard of the built gateway', () => {
  let home: string;
  let gateway: ChildProcess | null = null;

  beforeAll(() => requireBuiltAgent());
  beforeEach(async () => {
    home = await makeAgentHome();
  });
  afterEach(async () => {
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    }
    gateway = null;
    await removeAgentHome(home);
  });

  it('serves the sign-in form, then jobs made by the CLI; a pause there is what agent cron list --json says', async () => {
    const port = await freePort();
    const id = await createJob(home, ['every 1h', 'Count the stars', '--name', 'Stars']);
    await appendFile(join(home, 'config.yaml'), ['dashboard:', '  enabled: true', `  port: ${port}`, ''].join('\n'));
    const started = await startGatewayUntil(home, 'dashboard listening on', { env: { AGENT_DASHBOARD_TOKEN: TOKEN }, withinMs: 15_000 });
    gateway = started.gateway;
    expect(started.output()).toContain(`dashboard listening on http://127.0.0.1:${port}/`);
    const base = `http://127.0.0.1:${port}`;

    expect(await (await fetch(`${base}/`)).text()).toContain('<label for="token">Token</label>');
    const { cookie, csrf } = await signIn(base, `/jobs/${id}`);
    const jobs = await (await fetch(`${base}/jobs`, { headers: { cookie } })).text();
    expect(jobs).toContain('>Stars</a>');

    const paused = await fetch(`${base}/jobs/${id}/pause`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ csrf, reason: 'Telescope in repair' }),
      redirect: 'manual',
    });
    expect(paused.status).toBe(303);
    const listed = JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<Record<string, unknown>>;
    expect(listed).toEqual([expect.objectContaining({ id, state: 'paused', paused_reason: 'Telescope in repair' })]);
    const api = await fetch(`${base}/api/jobs/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await api.json()).toMatchObject({ state: 'paused', paused_reason: 'Telescope in repair' });
  });

  it('takes the bearer token on POST and DELETE, and gives a one-shot made there its next run', async () => {
    const port = await freePort();
    await appendFile(join(home, 'config.yaml'), ['dashboard:', '  enabled: true', `  port: ${port}`, ''].join('\n'));
    gateway = (await startGatewayUntil(home, 'dashboard listening on', { env: { AGENT_DASHBOARD_TOKEN: TOKEN }, withinMs: 15_000 }))
      .gateway;
    const base = `http://127.0.0.1:${port}`;
    const bearer = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

    const created = await fetch(`${base}/api/jobs`, {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ schedule: '2h', prompt: 'Stretch', name: 'Stretch' }),
    });
    expect(created.status).toBe(201);
    const { id, next_run_at: nextRunAt } = (await created.json()) as { id: string; next_run_at: string };
    const shown = (await (await fetch(`${base}/api/jobs/${id}`, { headers: bearer })).json()) as { next_runs: string[] };
    expect(shown.next_runs.map((at) => Date.parse(at))).toEqual([Date.parse(nextRunAt)]);
    const table = await (await fetch(`${base}/jobs`, { headers: bearer })).text();
    expect(table).toMatch(
      />Stretch<\/a><\/td><td>once in 2h<\/td><td><span class="badge status-scheduled">scheduled<\/span><\/td><td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d<\/td>/,
    );

    const removed = await fetch(`${base}/api/jobs/${id}`, { method: 'DELETE', headers: bearer });
    expect(removed.status).toBe(200);
    expect(JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout)).toEqual([]);
  });

  it('answers every method without signing in on a tokenless loopback dashboard', async () => {
    const port = await freePort();
    const id = await createJob(home, ['every 1h', 'Count the stars', '--name', 'Stars']);
    await appendFile(join(home, 'config.yaml'), ['dashboard:', '  enabled: true', `  port: ${port}`, ''].join('\n'));
    gateway = (await startGatewayUntil(home, 'dashboard listening on', { withinMs: 15_000 })).gateway;
    const base = `http://127.0.0.1:${port}`;

    const paused = await fetch(`${base}/api/jobs/${id}/pause`, { method: 'POST' });
    expect(paused.status).toBe(200);
    expect(await paused.json()).toMatchObject({ state: 'paused' });
    expect((await fetch(`${base}/api/jobs/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect(JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout)).toEqual([]);
  });

  it('stops start-up with one sentence on a host others can reach without a token', async () => {
    const port = await freePort();
    await appendFile(join(home, 'config.yaml'), ['dashboard:', '  enabled: true', '  host: 0.0.0.0', `  port: ${port}`, ''].join('\n'));
    const run = await runAgent(['gateway'], { home });

    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /dashboard\.host is 0\.0\.0\.0, which other machines can reach, and no dashboard token is set; set AGENT_DASHBOARD_TOKEN \(or dashboard\.token\), or set dashboard\.host to 127\.0\.0\.1\./,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  const enable = (port: number) => writeDashboard(home, [`port: ${port}`]);

  it('refuses a request addressed to a name that re-resolves to this machine (DNS rebinding) with 421, without a token and with one', async () => {
    const id = await createJob(home, ['every 1h', 'Count the stars', '--name', 'Stars']);
    const port = await freePort();
    await enable(port);
    gateway = (await startGatewayUntil(home, 'dashboard listening on', { withinMs: 20_000 })).gateway;

    const read = await requestAs(port, `rebind.example:${port}`, '/api/jobs');
    expect(read.status).toBe(421);
    expect(JSON.parse(read.body).error).toMatch(
      /^A dashboard without a token answers only at 127\.0\.0\.1, localhost or \[::1\], not at "rebind\.example:\d+"; /,
    );
    expect(read.body).not.toContain('Stars');
    expect(read.headers['x-frame-options']).toBe('DENY');
    expect((await requestAs(port, 'rebind.example', '/api/jobs', 'POST')).status).toBe(421);
    expect((await requestAs(port, 'rebind.example', `/api/jobs/${id}`, 'DELETE')).status).toBe(421);
    expect(JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout)).toEqual([
      expect.objectContaining({ id, name: 'Stars' }),
    ]);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`])
      expect((await requestAs(port, host, '/api/jobs')).status).toBe(200);

    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
    const open = await freePort();
    await writeDashboard(home, ['host: 0.0.0.0', `port: ${open}`]);
    gateway = (await startGatewayUntil(home, 'dashboard listening on', { env: { AGENT_DASHBOARD_TOKEN: TOKEN }, withinMs: 20_000 }))
      .gateway;
    expect((await requestAs(open, `rebind.example:${open}`, '/')).status).toBe(421);
    expect((await requestAs(open, `127.0.0.1:${open}`, '/')).status).toBe(200);
  });

  it('after 50 wrong sign-ins refuses the next, even with the right token, with 429 and Retry-After, and logs it once', async () => {
    const port = await freePort();
    await enable(port);
    const started = await startGatewayUntil(home, 'dashboard listening on', { env: { AGENT_DASHBOARD_TOKEN: TOKEN }, withinMs: 20_000 });
    gateway = started.gateway;
    const base = `http://127.0.0.1:${port}`;
    const signIn = (token: string) =>
      fetch(`${base}/sign-in`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual' });

    const statuses: number[] = [];
    for (let attempt = 1; attempt <= 50; attempt++) statuses.push((await signIn('guess')).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(new Set(statuses.slice(5))).toEqual(new Set([429]));

    const right = await signIn(TOKEN);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(right.headers.get('set-cookie')).toBeNull();
    expect(await right.text()).toMatch(/Too many wrong tokens were tried; try again in \d+ seconds?\./);
    expect((await fetch(`${base}/api/jobs`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(429);
    expect(started.output().match(/attempts from 127\.0\.0\.1 had a wrong token/g)).toHaveLength(1);
  });

  it('refuses a token shorter than 128 bits beyond loopback, in agent config check and at start-up, in one sentence', async () => {
    const port = await freePort();
    await writeDashboard(home, ['host: 0.0.0.0', `port: ${port}`]);
    const env = { AGENT_DASHBOARD_TOKEN: 'x' };
    const sentence =
      /dashboard\.host is 0\.0\.0\.0, which other machines can reach, and AGENT_DASHBOARD_TOKEN is only 1 character long; set a token of at least 22 characters \(128 bits\), such as the output of "openssl rand -base64 24", or set dashboard\.host to 127\.0\.0\.1\./;

    const check = await runAgent(['config', 'check'], { home, env });
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(sentence);
    const run = await runAgent(['gateway'], { home, env });
    expect(run.code).not.toBe(0);
    expect(errorSentence(run)).toMatch(sentence);
    expect(run.stderr).not.toMatch(/\n\s+at /);

    await writeDashboard(home, ['host: 127.0.0.1', `port: ${port}`]);
    expect((await runAgent(['config', 'check'], { home, env })).code).toBe(0);
  });
});

/** Writes config.yaml's dashboard section (enabled) with `lines`, replacing one written before. */
async function writeDashboard(home: string, lines: string[]): Promise<void> {
  const file = join(home, 'config.yaml');
  const kept = (await readFile(file, 'utf8')).replace(/\ndashboard:\n(?: {2}.*\n)*/, '\n');
  await writeFile(file, `${kept.replace(/\n*$/, '\n')}dashboard:\n  enabled: true\n${lines.map((line) => `  ${line}\n`).join('')}`);
}
