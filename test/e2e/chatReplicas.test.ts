import type { ChildProcess } from 'node:child_process';
import { freePort } from '../support/freePort.js';
import { cutChatReceiverSession, scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { eventually } from '../support/processLiveness.js';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { ALICE, ALICE_DM, FakeSlackEvents, SLACK_SIGNING_SECRET } from '../support/platforms/FakeSlackEvents.js';
import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { TELEGRAM_TOKEN } from '../support/platforms/FakeTelegramServer.js';
import { FakeTelegramUpdatesServer } from '../support/platforms/FakeTelegramUpdatesServer.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { answeredFlags } from './chatRows.js';
import { localModelLines } from './configLines.js';

const ANSWERING = 'chat: answering on telegram';
const WAITING = 'chat: another gateway sharing this store answers on telegram';

/**
 * Two built gateways on one PostgreSQL database, both with Telegram receiving on (the same
 * config.yaml, as docs/scaling.md asks): one answers, the other waits, and takes over when the
 * first is killed with -9, answering what it left owed.
 */
describe('chats on gateway replicas, end to end', () => {
  let llm: FakeLlmServer;
  let telegram: FakeTelegramUpdatesServer;
  let scratch: ScratchDatabase;
  const homes: string[] = [];
  const gateways: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  /** config.yaml of a replica: the local model, the shared database, and `platformLines` under `platforms:`. */
  const writeReplicaConfig = (home: string, platformLines: string[]) =>
    writeHomeFile(
      home,
      'config.yaml',
      ['timezone: UTC', ...localModelLines(llm), 'database:', `  url: ${scratch.url}`, 'platforms:', ...platformLines, ''].join('\n'),
    );

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    telegram = await FakeTelegramUpdatesServer.start();
    scratch = await scratchDatabase();
    for (let n = 0; n < 2; n += 1) {
      const home = await makeAgentHome();
      homes.push(home);
      await writeReplicaConfig(home, [
        '  telegram:',
        `    bot_token: "${TELEGRAM_TOKEN}"`,
        `    base_url: "${telegram.url}"`,
        '    inbound: true',
        '    allowed_users: ["777"]',
      ]);
    }
  });

  /** Polls `agent status --json` until each live replica's Telegram receiver is in the states wanted (by pid); the last states seen. */
  const replicaReceiversUntil = async (wanted: Record<number, string>, withinMs = 15_000): Promise<Record<number, string>> => {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const run = await runAgent(['status', '--json'], { home: homes[1]!, env: { TEST_LLM_KEY: 'test-key' } });
      const replicas = (JSON.parse(run.stdout).replicas ?? []) as Array<{
        pid: number;
        chat_receivers: Array<{ platform: string; state: string }>;
      }>;
      const seen = Object.fromEntries(
        replicas.map((replica) => [replica.pid, replica.chat_receivers.find((receiver) => receiver.platform === 'telegram')?.state ?? '-']),
      );
      if (JSON.stringify(seen) === JSON.stringify(wanted) || Date.now() >= deadline) return seen;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  afterEach(async () => {
    for (const gateway of gateways.splice(0)) gateway.kill('SIGKILL');
    await telegram.close();
    await llm.close();
    await scratch.drop();
    for (const home of homes.splice(0)) await removeAgentHome(home);
  });

  it('answers each message once from one gateway, and the other answers what the first owed after a kill -9', async () => {
    const env = { TEST_LLM_KEY: 'test-key' };
    const first = await startGatewayUntil(homes[0]!, ANSWERING, { env });
    gateways.push(first.gateway);
    const second = await startGatewayUntil(homes[1]!, WAITING, { env });
    gateways.push(second.gateway);

    llm.reply(replies.text('Noted.'), replies.stall('Thinking'), replies.text('The deploy is at 5.'), replies.text('You are welcome.'));
    telegram.pushMessage({ text: 'the deploy is at 5' });
    await telegram.waitForSent(1);
    // The second message's turn hangs in the first gateway, which is then killed.
    telegram.pushMessage({ text: 'when is the deploy?' });
    expect(await eventually(() => llm.requests.length === 2, 10_000)).toBe(true);
    expect(second.output()).not.toContain(ANSWERING);
    // The database's leases say which replica receives, and that the other stands by.
    const [firstPid, secondPid] = [first.gateway.pid!, second.gateway.pid!];
    expect(await replicaReceiversUntil({ [firstPid]: 'up', [secondPid]: 'standby' })).toEqual({ [firstPid]: 'up', [secondPid]: 'standby' });
    first.gateway.kill('SIGKILL');

    expect(await eventually(() => second.output().includes(ANSWERING), 15_000)).toBe(true);
    // The dead one's lease lapses later; the one taking over says it receives.
    expect((await replicaReceiversUntil({ [secondPid]: 'up' }, 45_000))[secondPid]).toBe('up');
    await telegram.waitForSent(2);
    telegram.pushMessage({ text: 'thanks' });
    await telegram.waitForSent(3);

    expect(telegram.sent.map((body) => body.text)).toEqual(['Noted.', 'The deploy is at 5.', 'You are welcome.']);
    const database = await scratch.open();
    try {
      expect(await answeredFlags(database)).toEqual([true, true, true]);
    } finally {
      await database.close();
    }
  }, 240_000);

  it('answers, from the gateway holding the role, a Slack message pushed to the listener of the one that does not, once', async () => {
    const slack = await FakeSlackServer.start();
    slack.channels.push({ id: ALICE_DM, name: 'alice' });
    const ports = [await freePort(), await freePort()];
    try {
      for (const [n, home] of homes.entries()) {
        await writeReplicaConfig(home, [
          '  webhook:',
          '    enabled: true',
          '    extra:',
          '      host: 127.0.0.1',
          `      port: ${ports[n]}`,
          '  slack:',
          ...Object.entries(slack.settings).map(([key, value]) => `    ${key}: "${value}"`),
          `    signing_secret: "${SLACK_SIGNING_SECRET}"`,
          '    inbound: true',
          `    allowed_users: ["${ALICE}"]`,
        ]);
      }
      const env = { TEST_LLM_KEY: 'test-key' };
      gateways.push((await startGatewayUntil(homes[0]!, 'chat: answering on slack', { env })).gateway);
      const second = await startGatewayUntil(homes[1]!, 'chat: another gateway sharing this store answers on slack', { env });
      gateways.push(second.gateway);
      llm.reply(replies.text('Hello from the agent.'));

      const events = new FakeSlackEvents(`http://127.0.0.1:${ports[1]}`, { now: () => new Date() });
      expect((await events.post(events.envelope(events.directMessage('hi there')))).status).toBe(200);

      expect(await eventually(() => slack.sends.length >= 1, 10_000)).toBe(true);
      // One more look at the pending messages (every 2 s) must not answer it again.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(slack.sends.map((send) => (send.body as Record<string, unknown>).text)).toEqual(['Hello from the agent.']);
      expect(llm.requests).toHaveLength(1);
    } finally {
      await slack.close();
    }
  }, 240_000);

  it('stops answering when its session holding the role is cut, takes the role again, and answers on', async () => {
    const env = { TEST_LLM_KEY: 'test-key' };
    const gateway = await startGatewayUntil(homes[0]!, ANSWERING, { env });
    gateways.push(gateway.gateway);
    llm.reply(replies.text('Still here.'));

    // The server ends the session holding the role, as a restart of the server would.
    const database = await scratch.open();
    try {
      await cutChatReceiverSession(database);
    } finally {
      await database.close();
    }
    expect(await eventually(() => gateway.output().includes('this gateway lost the receiving role'), 10_000)).toBe(true);
    expect(await eventually(() => gateway.output().split(ANSWERING).length === 3, 15_000)).toBe(true);

    telegram.pushMessage({ text: 'are you there?' });
    await telegram.waitForSent(1);
    expect(telegram.sent.map((body) => body.text)).toEqual(['Still here.']);
  }, 240_000);
});
