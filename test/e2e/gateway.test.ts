import { once } from 'node:events';
import { eventually } from '../helpers/processLiveness.js';
import { createJob, editStoredJob, inAScratchHomeEachTest, startAgent, storedJob } from './agentCli.js';

/** `agent gateway` as an operator runs it: the real executable, a scratch home, SIGTERM to stop. */
describe('agent gateway', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('fires a job within a second of its time, and stops cleanly on SIGTERM', async () => {
    const id = await createJob(home, ['every 1h', 'Gateway job', '--name', 'gw', '--deliver', 'local']);
    const dueAt = new Date(Date.now() + 2_000);
    await editStoredJob(home, id, (job) => {
      job.next_run_at = dueAt.toISOString().replace(/\.\d{3}Z$/, 'Z');
    });
    const gateway = startAgent(['gateway'], { home });
    let output = '';
    gateway.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));

    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 15_000)).toBe(true);
    const ranAt = Date.parse(storedJob(home, id).last_run_at!);
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');

    expect(ranAt - Date.parse(dueAt.toISOString().replace(/\.\d{3}Z$/, 'Z'))).toBeLessThan(1_500);
    expect(code).toBe(0);
    expect(output).toContain('gateway started');
    expect(output).toMatch(/Ran job \w+ 'gw': ok/);
    expect(output).toContain('SIGTERM received; stopping');
  });
});
