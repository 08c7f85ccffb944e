import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunRecord } from '../../src/domain/runs/RunRecord.js';
import { eventually } from '../support/processLiveness.js';
import type { FakePlatformServer } from '../support/platforms/FakePlatformServer.js';
import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import {
  createJob,
  invocations,
  makeAgentHome,
  makeDue,
  outcomeOf,
  removeAgentHome,
  requireBuiltAgent,
  startGatewayUntil,
  storedJob,
  writeHomeFile,
} from './agentCli.js';

const platformLines = (name: string, fake: FakePlatformServer) => [
  `  ${name}:`,
  ...Object.entries(fake.settings).map(([key, value]) => `    ${key}: "${value}"`),
];

/** The ledger's records of a job's runs (files), oldest first. */
function ledgerRuns(home: string, jobId: string): RunRecord[] {
  const directory = join(home, 'runs', 'cron', jobId);
  if (!existsSync(directory)) return [];
  return readdirSync(directory)
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(directory, name), 'utf8')) as RunRecord);
}

/** A naive ISO time `ms` from now, to the second (read in the home's zone, UTC). */
function isoIn(ms: number): string {
  return new Date(Date.now() + ms).toISOString().slice(0, 19);
}

/**
 * Cron deliveries wait in their platform's lane, never in a run slot: through the built gateway,
 * with fake platforms on 127.0.0.1 standing in for Telegram and Slack.
 */
describe("agent gateway: cron answers wait in their platform's lane, not in a run slot", () => {
  let home: string;
  let gateway: ChildProcess | null = null;
  const fakes: FakePlatformServer[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    home = await makeAgentHome();
  });

  afterEach(async () => {
    if (gateway?.exitCode === null && gateway.signalCode === null) gateway.kill('SIGKILL');
    gateway = null;
    for (const fake of fakes.splice(0)) await fake.close();
    await removeAgentHome(home);
  });

  async function configure(lines: string[]): Promise<void> {
    await writeHomeFile(home, 'config.yaml', [readFileSync(join(home, 'config.yaml'), 'utf8').trimEnd(), ...lines, ''].join('\n'));
  }

  it('delivers a Slack job due after four runs whose Telegram never answers within 5 s of its due time', async () => {
    const [telegram, slack] = await Promise.all([FakeTelegramServer.start(), FakeSlackServer.start()]);
    fakes.push(telegram, slack);
    telegram.failNext({ failure: 'silent', times: Infinity });
    await configure([
      'cron:',
      '  max_parallel_jobs: 4',
      'gateway:',
      '  shutdown_grace_seconds: 1',
      'platforms:',
      ...platformLines('telegram', telegram),
      ...platformLines('slack', slack),
    ]);
    const hanging: string[] = [];
    for (const n of [1, 2, 3, 4])
      hanging.push(await createJob(home, ['every 1h', `Telegram digest ${n}`, '--name', `telegram-${n}`, '--deliver', 'telegram']));
    for (const id of hanging) await makeDue(home, id);

    const started = await startGatewayUntil(home, 'gateway started');
    gateway = started.gateway;
    // All four answered, their deliveries waiting on Telegram, which answers none of them.
    expect(await eventually(() => invocations(home).length === 4 && telegram.attempts >= 2, 20_000)).toBe(true);

    const dueAt = isoIn(3000);
    const slackJob = await createJob(home, [dueAt, 'Slack digest', '--name', 'slack', '--deliver', 'slack']);
    const dueMs = Date.parse(`${dueAt}Z`);
    expect(await eventually(() => slack.delivered.length === 1, dueMs + 5000 - Date.now())).toBe(true);
    expect(slack.delivered[0]).toContain('Answer to: Slack digest');
    expect(await eventually(() => storedJob(home, slackJob).last_status === 'ok', 5000)).toBe(true);

    // The Telegram jobs are back in service, their status not yet written; the ledger shows them delivering.
    for (const id of hanging) {
      expect(storedJob(home, id)).toMatchObject({ state: 'scheduled', last_status: null });
      expect(storedJob(home, id).claim ?? null).toBeNull();
      expect(ledgerRuns(home, id)).toEqual([
        expect.objectContaining({ status: 'running', delivery_pending: true, answer: expect.stringContaining('Telegram digest') }),
      ]);
    }
    expect(telegram.delivered).toEqual([]);
    expect(started.output()).not.toMatch(/waits for a free run slot/);
  }, 240_000);

  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'delivers an answer left waiting by a gateway stopped with %s once after the restart, without running the agent again',
    async (signal) => {
      const telegram = await FakeTelegramServer.start();
      fakes.push(telegram);
      let down = true;
      telegram.failNext({ failure: 'silent', times: Infinity, when: () => down });
      await configure(['gateway:', '  shutdown_grace_seconds: 1', 'platforms:', ...platformLines('telegram', telegram)]);
      const job = await createJob(home, ['every 1h', 'Morning digest', '--name', 'digest', '--deliver', 'telegram']);
      await makeDue(home, job);

      const first = await startGatewayUntil(home, 'gateway started');
      gateway = first.gateway;
      expect(
        await eventually(() => telegram.attempts >= 1 && ledgerRuns(home, job).some((run) => run.delivery_pending === true), 20_000),
      ).toBe(true);
      const ended = outcomeOf(first.gateway);
      first.gateway.kill(signal);
      const stopped = await ended;
      if (signal === 'SIGTERM') expect(stopped.code).toBe(0);
      expect(invocations(home)).toHaveLength(1);
      expect(ledgerRuns(home, job)).toEqual([expect.objectContaining({ status: 'running', delivery_pending: true, finished_at: null })]);
      expect(storedJob(home, job)).toMatchObject({ state: 'scheduled', last_status: null });

      down = false;
      const second = await startGatewayUntil(home, 'gateway started');
      gateway = second.gateway;
      expect(await eventually(() => storedJob(home, job).last_status === 'ok' && ledgerRuns(home, job)[0]?.status === 'ok', 20_000)).toBe(
        true,
      );
      expect(telegram.delivered).toHaveLength(1);
      expect(telegram.delivered[0]).toContain('Answer to: Morning digest');
      expect(invocations(home)).toHaveLength(1);
      expect(ledgerRuns(home, job)).toEqual([
        expect.objectContaining({
          status: 'ok',
          delivery_pending: false,
          redelivery_claim: null,
          deliveries: [expect.objectContaining({ target: 'telegram', outcome: 'delivered' })],
        }),
      ]);
      expect(second.output()).toMatch(/left waiting by a stopped gateway, without running the agent again/);

      // A third start has nothing left to deliver.
      const stoppedAgain = outcomeOf(second.gateway);
      second.gateway.kill('SIGTERM');
      await stoppedAgain;
      const third = await startGatewayUntil(home, 'gateway started');
      gateway = third.gateway;
      expect(third.output()).not.toMatch(/left waiting by a stopped gateway/);
      expect(telegram.delivered).toHaveLength(1);
    },
    90_000,
  );
});
