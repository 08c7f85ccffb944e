import { once } from 'node:events';
import { eventually } from '../support/processLiveness.js';
import { createJob, inAScratchHomeEachTest, startAgent, storedJob } from './agentCli.js';
import { clearOfMinuteTicks, nextMinuteTick } from './minuteTicks.js';

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** `agent gateway` as an operator runs it: the real executable, a scratch home, SIGTERM to stop. */
describe('agent gateway', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('fires a job at its time by its own timer, not at the next minute tick, and stops cleanly on SIGTERM', async () => {
    const gateway = startAgent(['gateway'], { home });
    let output = '';
    gateway.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    // However long the cold start takes, the job is created only once the gateway is up.
    expect(await eventually(() => output.includes('gateway started'), 20_000)).toBe(true);

    const dueAt = clearOfMinuteTicks(Date.now() + 2_000, 0, 10_000);
    const id = await createJob(home, [iso(dueAt), 'Gateway job', '--name', 'gw', '--deliver', 'local']);
    const tick = nextMinuteTick(dueAt);

    expect(await eventually(() => storedJob(home, id).last_status === 'ok', tick + 10_000 - Date.now())).toBe(true);
    const ranAt = Date.parse(storedJob(home, id).last_run_at!);
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');

    expect(ranAt).toBeGreaterThanOrEqual(dueAt);
    expect(ranAt).toBeLessThan(tick);
    expect(code).toBe(0);
    expect(output).toMatch(/Ran job \w+ 'gw': ok/);
    expect(output).toContain('SIGTERM received; stopping');
  }, 240_000);
});
