import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, isRunning } from '../support/processLiveness.js';
import {
  AGENT_EXECUTABLE,
  createJob,
  inAScratchHomeEachTest,
  invocations,
  outcomeOf,
  runAgent,
  storedJob,
  writeHomeFile,
} from './agentCli.js';
import { spawn } from '../support/testProcesses.js';

const HEADER =
  '[Cronjob "Build watch" output: a scheduled job, not the user. Review it, act on anything that needs action, and summarize for the chat.]';

/** A stand-in model for a profile: it keeps everything it was given in received.txt beside itself. */
const RECEIVING_MODEL = `
import { appendFileSync } from 'node:fs';
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  appendFileSync(new URL('received.txt', new URL('.', import.meta.url)), input + '\\n---\\n');
  process.stdout.write('Noted.\\n');
});
`;

/** Makes profile `name` whose model records what it receives (and answers `answerAfterMs` later); returns the profile's home. */
async function receivingProfile(home: string, name: string, answerAfterMs = 0): Promise<string> {
  const profile = join(home, 'profiles', name);
  const program =
    answerAfterMs === 0
      ? RECEIVING_MODEL
      : RECEIVING_MODEL.replace(
          "process.stdout.write('Noted.\\n');",
          `setTimeout(() => process.stdout.write('Noted.\\n'), ${answerAfterMs});`,
        );
  const model = await writeHomeFile(home, `profiles/${name}/model.mjs`, program);
  await writeHomeFile(
    home,
    `profiles/${name}/config.yaml`,
    `timezone: UTC\nmodel:\n  provider: command\n  command: ${JSON.stringify([process.execPath, model])}\ntools:\n  sandbox: off\n`,
  );
  return profile;
}

function received(profile: string): string {
  const path = join(profile, 'received.txt');
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

function mailboxRecords(home: string): Array<Record<string, unknown>> {
  const mailbox = join(home, 'runtime', 'bot_chat');
  if (!existsSync(mailbox)) return [];
  return readdirSync(mailbox)
    .filter((name) => name.endsWith('.json') && name !== 'owner.json')
    .map((name) => JSON.parse(readFileSync(join(mailbox, name), 'utf8')) as Record<string, unknown>);
}

describe('bot-chat delivery, end to end', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('without a live owner, runs agent chat in the profile with the prefixed answer and settles the receipt', async () => {
    const profile = await receivingProfile(home, 'work');
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'Build watch', '--deliver', 'bot-chat:work']);

    const run = await runAgent(['cron', 'run', id], { home });

    expect(run.code).toBe(0);
    expect(invocations(home)).toEqual(['Check the build']);
    expect(received(profile)).toContain(`${HEADER}\n\nAnswer to: Check the build`);
    expect(storedJob(home, id)).toMatchObject({ last_status: 'ok', last_delivery_error: null, last_delivery_queued: null });
    const [record] = mailboxRecords(profile);
    expect(record).toMatchObject({ status: 'settled', lane: 'command-line', job_id: id });
    expect(record!.receipt).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(profile, 'runtime', 'bot_chat')).mode & 0o777).toBe(0o700);
    expect(statSync(join(profile, 'runtime', 'bot_chat', `${record!.receipt as string}.json`)).mode & 0o777).toBe(0o600);
  });

  it("records delivery_failed with the chat's stderr when agent chat fails", async () => {
    await writeHomeFile(
      home,
      'profiles/work/config.yaml',
      'model:\n  provider: command\n  command: ["sh", "-c", "echo model broke >&2; exit 4"]\ntools:\n  sandbox: off\n',
    );
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'Build watch', '--deliver', 'bot-chat:work']);

    await runAgent(['cron', 'run', id], { home });

    const job = storedJob(home, id);
    expect(job.last_status).toBe('delivery_failed');
    expect(job.last_delivery_error).toMatch(/^bot-chat:work: agent chat --profile work exited with code 1: .*model broke/s);
    expect(mailboxRecords(join(home, 'profiles', 'work'))).toEqual([expect.objectContaining({ status: 'failed' })]);
  });

  it('refuses a profile that does not exist as blocked_config naming it', async () => {
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'Build watch', '--deliver', 'bot-chat:ghost']);

    await runAgent(['cron', 'run', id], { home });

    const job = storedJob(home, id);
    expect(job.last_status).toBe('blocked_config');
    expect(job.last_error).toContain('"ghost"');
    expect(invocations(home)).toEqual([]);
  });

  it('refuses a profile name with path characters when the job is created', async () => {
    const run = await runAgent(['cron', 'create', 'every 1h', 'x', '--deliver', 'bot-chat:../elsewhere', '--no-tick'], { home });

    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('not allowed');
  });

  it("delivers plain bot-chat to the job's own home", async () => {
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'Build watch', '--deliver', 'bot-chat']);

    await runAgent(['cron', 'run', id], { home });

    expect(storedJob(home, id).last_status).toBe('ok');
    // The chat's turn ends with the answer, so the stand-in logs its last line.
    expect(invocations(home)).toEqual(['Check the build', 'Answer to: Check the build']);
    expect(mailboxRecords(home)).toEqual([expect.objectContaining({ status: 'settled' })]);
  });

  it('with an owner that died without releasing its lease, takes the command-line lane', async () => {
    const profile = await receivingProfile(home, 'work');
    const lease = new Date(Date.now() + 60_000).toISOString();
    await writeHomeFile(
      home,
      'profiles/work/runtime/bot_chat/owner.json',
      JSON.stringify({ pid: 2 ** 22 + 12345, lease_expires_at: lease }),
    );
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'Build watch', '--deliver', 'bot-chat:work']);

    await runAgent(['cron', 'run', id], { home });

    expect(storedJob(home, id).last_status).toBe('ok');
    expect(received(profile)).toContain(HEADER);
  });

  describe('with a live agent chat on a terminal in the profile', () => {
    let chat: ChildProcess | null = null;

    afterEach(() => {
      if (chat?.pid && isRunning(chat.pid)) chat.kill('SIGKILL');
      chat = null;
    });

    /** `agent chat --profile work` on a pseudo-terminal (util-linux `script`), as a person would have it. */
    function startChatOnTerminal(): { child: ChildProcess; screen: () => string } {
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const name of Object.keys(env)) if (name.startsWith('AGENT_')) delete env[name];
      delete env.NODE_OPTIONS;
      Object.assign(env, { AGENT_HOME: home, NO_COLOR: '1' });
      const command = [process.execPath, AGENT_EXECUTABLE, 'chat', '--profile', 'work', '--no-tick'].map((part) => `'${part}'`).join(' ');
      const child = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
      return { child, screen: () => screen };
    }

    it('queues the delivery in its mailbox (delivery_queued), and the chat runs it as a turn and settles it', async () => {
      const profile = await receivingProfile(home, 'work');
      const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'Build watch', '--deliver', 'bot-chat:work']);
      const terminal = startChatOnTerminal();
      chat = terminal.child;
      const ownerFile = join(profile, 'runtime', 'bot_chat', 'owner.json');
      expect(await eventually(() => existsSync(ownerFile), 15_000)).toBe(true);

      const run = await runAgent(['cron', 'run', id], { home });

      const job = storedJob(home, id);
      expect(run.code).toBe(0);
      expect(job.last_status).toBe('delivery_queued');
      expect(job.last_delivery_queued).toHaveLength(1);
      const receipt = job.last_delivery_queued![0]!;
      const settled = () => mailboxRecords(profile).some((record) => record.receipt === receipt && record.status === 'settled');
      expect(await eventually(settled, 15_000)).toBe(true);
      expect(received(profile)).toContain(`${HEADER}\n\nAnswer to: Check the build`);
      // The turn settles its record before the terminal has drawn the answer: wait for the screen.
      expect(await eventually(() => terminal.screen().includes('Noted.'), 10_000)).toBe(true);

      terminal.child.stdin!.write('/exit\r');
      const ended = await outcomeOf(terminal.child);
      expect(ended.code).toBe(0);
      expect(existsSync(ownerFile)).toBe(false);
      // Its waits add up to 40 s on a loaded machine (a terminal chat starting, a turn, the screen).
    }, 240_000);

    it('ends at /exit typed while a delivered turn is still answering, once that turn is settled', async () => {
      const profile = await receivingProfile(home, 'work', 3_000);
      const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'Build watch', '--deliver', 'bot-chat:work']);
      const terminal = startChatOnTerminal();
      chat = terminal.child;
      const ownerFile = join(profile, 'runtime', 'bot_chat', 'owner.json');
      expect(await eventually(() => existsSync(ownerFile), 15_000)).toBe(true);
      expect((await runAgent(['cron', 'run', id], { home })).code).toBe(0);
      expect(await eventually(() => received(profile).includes(HEADER), 15_000)).toBe(true);

      // The model answers 3 s after it was asked: /exit reaches the chat while the turn still runs.
      terminal.child.stdin!.write('/exit\r');
      const ended = await outcomeOf(terminal.child);

      expect(ended.code).toBe(0);
      expect(terminal.screen()).toContain('Noted.');
      expect(mailboxRecords(profile)).toEqual([expect.objectContaining({ status: 'settled' })]);
      expect(existsSync(ownerFile)).toBe(false);
    }, 240_000);
  });
});
