import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../helpers/freePort.js';
import { createJob, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil } from './agentCli.js';

const TOKEN = 'e2e-dashboard-token';

/** A signed-in session of the dashboard at `base`: its cookie and the CSRF token of `path`. */
async function signIn(base: string, path: string): Promise<{ cookie: string; csrf: string }> {
  const signedIn = await fetch(`${base}/sign-in`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual' });
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
  const page = await (await fetch(`${base}${path}`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
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

  it("takes the bearer token on POST and DELETE, and gives a one-shot made there its next run", async () => {
    const port = await freePort();
    await appendFile(join(home, 'config.yaml'), ['dashboard:', '  enabled: true', `  port: ${port}`, ''].join('\n'));
    gateway = (await startGatewayUntil(home, 'dashboard listening on', { env: { AGENT_DASHBOARD_TOKEN: TOKEN }, withinMs: 15_000 })).gateway;
    const base = `http://127.0.0.1:${port}`;
    const bearer = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

    const created = await fetch(`${base}/api/jobs`, { method: 'POST', headers: bearer, body: JSON.stringify({ schedule: '2h', prompt: 'Stretch', name: 'Stretch' }) });
    expect(created.status).toBe(201);
    const { id, next_run_at: nextRunAt } = (await created.json()) as { id: string; next_run_at: string };
    const shown = (await (await fetch(`${base}/api/jobs/${id}`, { headers: bearer })).json()) as { next_runs: string[] };
    expect(shown.next_runs.map((at) => Date.parse(at))).toEqual([Date.parse(nextRunAt)]);
    const table = await (await fetch(`${base}/jobs`, { headers: bearer })).text();
    expect(table).toMatch(/>Stretch<\/a><\/td><td>once in 2h<\/td><td>scheduled<\/td><td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d<\/td>/);

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
    expect(run.stderr).toMatch(/dashboard\.host is 0\.0\.0\.0, which other machines can reach, and no dashboard token is set; set AGENT_DASHBOARD_TOKEN \(or dashboard\.token\), or set dashboard\.host to 127\.0\.0\.1\./);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
