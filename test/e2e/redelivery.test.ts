import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import {
  createJob,
  errorSentence,
  invocations,
  makeAgentHome,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  storedJob,
  writeHomeFile,
} from './agentCli.js';
import { webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';

const SECRET = 'it-is-a-secret';

/** The records of the route `alerts`, as the worker writes them. */
function alertRecords(home: string): string[] {
  const directory = join(home, 'webhooks', 'output', 'alerts');
  try {
    return readdirSync(directory).map((name) => readFileSync(join(directory, name), 'utf8'));
  } catch {
    return [];
  }
}

/**
 * `agent cron redeliver` and `agent webhook redeliver` through the built executable: a Telegram
 * stand-in counts the messages it accepts, the `command` model stand-in counts the agent's runs.
 */
describe('delivering a recorded answer again', () => {
  let home: string;
  let telegram: FakeTelegramServer;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    telegram = await FakeTelegramServer.start();
    home = await makeAgentHome({
      extraConfig: [
        'platforms:',
        '  telegram:',
        ...Object.entries(telegram.settings).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`),
      ].join('\n'),
    });
  });

  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await telegram.close();
    await removeAgentHome(home);
  });

  const agent = (...args: string[]) => runAgent(args, { home });

  it('agent cron redeliver sends the answer of a run whose delivery failed, without running the agent again, and the job says ok', async () => {
    const id = await createJob(home, ['every 1h', 'Check the disks', '--name', 'disks', '--deliver', telegram.target]);
    // Telegram is down for the run: every attempt (with its retries) gets a 503.
    telegram.failNext({ failure: 'unavailable', times: 3 });

    const ran = await agent('cron', 'run', 'disks', '--no-tick');
    expect(ran.code).toBe(1);
    expect(telegram.delivered).toEqual([]);
    expect(storedJob(home, id)).toMatchObject({
      last_status: 'delivery_failed',
      last_delivery_error: expect.stringMatching(/^telegram:-1001234567890: /),
    });
    expect(invocations(home)).toHaveLength(1);

    const redelivered = await agent('cron', 'redeliver', 'disks', '--no-tick');

    expect(redelivered.stderr).toBe('');
    expect(redelivered.code).toBe(0);
    const [runId] = /^Delivered the answer of run (\S+) of job /.exec(redelivered.stdout)!.slice(1);
    expect(redelivered.stdout).toBe(
      `Delivered the answer of run ${runId} of job ${id} 'disks' again: ok.\n  telegram:-1001234567890: delivered (message 1)\n`,
    );
    expect(invocations(home)).toHaveLength(1);
    expect(telegram.delivered).toHaveLength(1);
    expect(telegram.delivered[0]).toContain('Cronjob Response: disks');
    expect(telegram.delivered[0]).toContain('Answer to: ');
    expect(storedJob(home, id)).toMatchObject({
      last_status: 'ok',
      last_delivery_error: null,
      failure_streak: 0,
      repeat: { completed: 1 },
    });

    const [run] = JSON.parse((await agent('cron', 'runs', 'disks', '--json', '--no-tick')).stdout);
    expect(run).toMatchObject({
      id: runId,
      status: 'ok',
      error: null,
      deliveries: [{ target: 'telegram:-1001234567890', outcome: 'delivered', message_ids: ['1'], error: null }],
      redelivered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const shown = JSON.parse((await agent('cron', 'show', 'disks', '--json', '--no-tick')).stdout);
    expect(shown.recent_runs[0]).toMatchObject({ id: runId, redelivered_at: run.redelivered_at });

    // Named by its id, it is sent again (every target got it already, so every target gets it again).
    const again = await agent('cron', 'redeliver', id, '--run', runId!, '--no-tick');
    expect(again.code).toBe(0);
    expect(telegram.delivered).toHaveLength(2);
    expect(invocations(home)).toHaveLength(1);
  });

  it('agent cron redeliver that fails again exits 1, and the job keeps delivery_failed with the new reason', async () => {
    const id = await createJob(home, ['every 1h', 'Check the disks', '--name', 'disks', '--deliver', telegram.target]);
    telegram.failNext({ failure: 'refused', times: 2 });
    await agent('cron', 'run', 'disks', '--no-tick');

    const redelivered = await agent('cron', 'redeliver', 'disks', '--no-tick');

    expect(redelivered.code).toBe(1);
    expect(redelivered.stdout).toMatch(/again: delivery_failed\.\n {2}telegram:-1001234567890: failed: telegram refused the message/);
    expect(telegram.delivered).toEqual([]);
    expect(storedJob(home, id)).toMatchObject({
      last_status: 'delivery_failed',
      last_delivery_error: expect.stringContaining('telegram refused the message'),
    });
    expect(invocations(home)).toHaveLength(1);
  });

  it('agent cron redeliver refuses, in one sentence with exit 1, a run without an answer, a [SILENT] one, an unknown run and an unknown job', async () => {
    const blocked = await createJob(home, ['every 1h', 'Notify', '--name', 'notify', '--deliver', 'discord:123456789012345678']);
    await agent('cron', 'run', 'notify', '--no-tick');
    await createJob(home, ['every 1h', 'Report only when it matters [SILENT]', '--name', 'quiet', '--deliver', telegram.target]);
    expect((await agent('cron', 'run', 'quiet', '--no-tick')).code).toBe(0);
    const quietRun = JSON.parse((await agent('cron', 'runs', 'quiet', '--json', '--no-tick')).stdout)[0].id as string;

    const refusals = {
      noAnswer: await agent('cron', 'redeliver', 'notify', '--no-tick'),
      silent: await agent('cron', 'redeliver', 'quiet', '--no-tick'),
      silentById: await agent('cron', 'redeliver', 'quiet', '--run', quietRun, '--no-tick'),
      unknownRun: await agent('cron', 'redeliver', 'quiet', '--run', 'nope', '--no-tick'),
      unknownJob: await agent('cron', 'redeliver', 'nothing', '--no-tick'),
    };

    for (const run of Object.values(refusals)) expect(run.code).toBe(1);
    expect(errorSentence(refusals.noAnswer)).toMatch(
      new RegExp(
        `^error: Job ${blocked} 'notify' has no recorded run with an answer to deliver: its last run was not run \\(Delivery platform "discord" is not configured: .+\\)\\.$`,
      ),
    );
    expect(errorSentence(refusals.silent)).toMatch(
      /^error: Job \w+ 'quiet' has no recorded run with an answer to deliver: its last run answered \[SILENT\], which is never delivered\.$/,
    );
    expect(errorSentence(refusals.silentById)).toBe(
      `error: Run ${quietRun} of job ${quietRun.split('.')[0]} 'quiet' has no answer to deliver: it answered [SILENT], which is never delivered.`,
    );
    expect(errorSentence(refusals.unknownRun)).toMatch(
      /^error: Job \w+ 'quiet' has no recorded run "nope"; "agent cron runs \w+ --json" gives the ids of its runs\.$/,
    );
    expect(errorSentence(refusals.unknownJob)).toBe('error: No job has the id or name "nothing"; see "agent cron list".');
    expect(telegram.delivered).toEqual([]);
    expect(invocations(home)).toHaveLength(1);
    expect(storedJob(home, blocked)).toMatchObject({ last_status: 'blocked_config' });
  });

  it('agent webhook redeliver sends the answer of a webhook run whose delivery failed, without running the agent again', async () => {
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      [
        readFileSync(join(home, 'config.yaml'), 'utf8').trimEnd(),
        ...webhookListenerLines(port, SECRET).slice(1),
        '        alerts:',
        '          deliver: telegram',
        '          deliver_extra: {chat_id: "-1001234567890"}',
        '          prompt: "Alert {number}"',
        '',
      ].join('\n'),
    );
    telegram.failNext({ failure: 'refused' });
    const { gateway } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    expect((await postPullRequestEvent(port, SECRET, 'delivery-1', { action: 'opened', number: 7 }, 'alerts')).status).toBe(202);
    expect(await eventually(() => alertRecords(home).some((text) => text.includes('- Outcome: delivery_failed')), 10_000)).toBe(true);
    const [failed] = JSON.parse((await agent('webhook', 'runs', 'alerts', '--json')).stdout);
    expect(failed).toMatchObject({
      outcome: 'delivery_failed',
      status: 'delivery_failed',
      answer: 'Answer to: Alert 7',
      redelivered_at: null,
    });
    expect(telegram.delivered).toEqual([]);
    expect(invocations(home)).toHaveLength(1);
    // The table shows the id that names the run.
    expect((await agent('webhook', 'runs', 'alerts')).stdout.split('\n')[1]!.split(/\s{2,}/)[1]).toBe(failed.id);

    const redelivered = await agent('webhook', 'redeliver', failed.id);

    expect(redelivered).toMatchObject({ code: 0, stderr: '' });
    expect(redelivered.stdout).toBe(
      `Delivered the answer of webhook run ${failed.id} (route 'alerts') again to telegram:-1001234567890.\n`,
    );
    expect(telegram.delivered).toEqual(['Answer to: Alert 7']);
    expect(invocations(home)).toHaveLength(1);
    const [after] = JSON.parse((await agent('webhook', 'runs', 'alerts', '--json')).stdout);
    expect(after).toMatchObject({
      id: failed.id,
      outcome: 'delivered',
      error: null,
      status: 'ok',
      deliveries: [{ target: 'telegram:-1001234567890', outcome: 'delivered', message_ids: ['1'], error: null }],
      redelivered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    gateway.kill('SIGTERM');
    expect((await once(gateway, 'exit'))[0]).toBe(0);
  });

  it('agent webhook redeliver of an answer that went to the log writes it to the gateway log and prints it; without a gateway, to its own log', async () => {
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      [
        readFileSync(join(home, 'config.yaml'), 'utf8').trimEnd(),
        ...webhookListenerLines(port, SECRET).slice(1),
        '        notes:',
        '          deliver: log',
        '          prompt: "Note {number}"',
        '',
      ].join('\n'),
    );
    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    running.push(gateway);
    expect((await postPullRequestEvent(port, SECRET, 'delivery-log-1', { action: 'opened', number: 9 }, 'notes')).status).toBe(202);
    const entries = () =>
      output()
        .split('\n')
        .filter((line) => line.includes("webhook answer on route 'notes':\\nAnswer to: Note 9"));
    expect(await eventually(() => entries().length === 1, 10_000)).toBe(true);
    const [ran] = JSON.parse((await agent('webhook', 'runs', 'notes', '--json')).stdout);

    // By the route's name: its latest run with an answer.
    const redelivered = await agent('webhook', 'redeliver', 'notes');

    expect(redelivered).toMatchObject({ code: 0, stderr: '' });
    expect(redelivered.stdout).toBe(
      `Delivered the answer of webhook run ${ran.id} (route 'notes') again to the log: it is in the gateway log (process ${gateway.pid}). The answer:\nAnswer to: Note 9\n`,
    );
    expect(await eventually(() => entries().length === 2, 5_000)).toBe(true);
    expect(entries()[1]).toContain(`"event_id":"${ran.id}"`);
    expect(entries()[1]).toContain('"delivered_again":"true"');
    expect(invocations(home)).toHaveLength(1);

    gateway.kill('SIGTERM');
    expect((await once(gateway, 'exit'))[0]).toBe(0);
    const alone = await agent('webhook', 'redeliver', ran.id);

    expect(alone.code).toBe(0);
    expect(alone.stdout).toBe(
      `Delivered the answer of webhook run ${ran.id} (route 'notes') again to the log: it is in this command's log (stderr), as no gateway of this home runs on this machine. The answer:\nAnswer to: Note 9\n`,
    );
    expect(alone.stderr).toContain("webhook answer on route 'notes':\\nAnswer to: Note 9");
    expect(invocations(home)).toHaveLength(1);
  });

  it('agent webhook redeliver refuses an unknown run id in one sentence, exit 1', async () => {
    const run = await agent('webhook', 'redeliver', 'no-such-run');
    expect(run.code).toBe(1);
    expect(errorSentence(run)).toBe('error: No webhook run has the id "no-such-run"; "agent webhook runs" lists the runs with their ids.');
  });
});
