import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileBotChatDelivery, receiptIdOf } from '../../../src/adapters/botchat/FileBotChatDelivery.js';
import { FileBotChatOwner } from '../../../src/adapters/botchat/FileBotChatOwner.js';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import type { BotChatRequest } from '../../../src/application/ports/BotChatDelivery.js';

/** Stands in for `agent`: appends its arguments and the query file's text to chat.log in AGENT_HOME. */
const FAKE_AGENT = `
import { appendFileSync, readFileSync } from 'node:fs';
const args = process.argv.slice(2);
const query = readFileSync(args[args.indexOf('--query-file') + 1], 'utf8');
appendFileSync(process.env.AGENT_HOME + '/chat.log', JSON.stringify({ args, query }) + '\\n');
if (query.includes('[fail]')) { process.stderr.write('chat refused\\n'); process.exit(3); }
`;

const config = { cron: { bot_chat_delivery_timeout_seconds: 30 } } as AgentConfig;
const request = (over: Partial<BotChatRequest> = {}): BotChatRequest => ({
  profile: 'work',
  jobId: 'abc123',
  jobName: 'Build watch',
  executionId: 'host:1@2026-06-01T09:00:00Z',
  message: 'hello',
  ...over,
});

describe('FileBotChatDelivery and FileBotChatOwner', () => {
  let home: string;
  let profile: string;
  let delivery: FileBotChatDelivery;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'botchat-'));
    profile = join(home, 'profiles', 'work');
    await mkdir(profile, { recursive: true });
    const agent = join(home, 'fake-agent.mjs');
    await writeFile(agent, FAKE_AGENT);
    delivery = new FileBotChatDelivery(agentPathsFor(home), config, { AGENT_HOME: home, PATH: process.env.PATH }, [
      process.execPath,
      agent,
    ]);
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  const chats = () => (existsSync(join(home, 'chat.log')) ? readFileSync(join(home, 'chat.log'), 'utf8').split('\n').filter(Boolean) : []);

  it('names the receipt by the sha256 of [source_home, job_id, execution_id, target_home]', async () => {
    const receipt = await delivery.deliver(request());

    expect(receipt).toEqual({ lane: 'delivered', receipt: receiptIdOf(home, 'abc123', 'host:1@2026-06-01T09:00:00Z', profile) });
    expect(JSON.parse(chats()[0]!).args).toEqual([
      'chat',
      '--profile',
      'work',
      '--create-if-missing',
      '--query-file',
      expect.any(String),
      '--no-tick',
    ]);
  });

  it('never delivers a receipt that already exists again', async () => {
    await delivery.deliver(request());

    await expect(delivery.deliver(request())).rejects.toThrow(/already exists/);
    expect(chats()).toHaveLength(1);
  });

  it('queues for a live owner and runs no command; the owner claims and settles it', async () => {
    const owner = new FileBotChatOwner(agentPathsFor(profile));
    expect(await owner.register()).toBe(true);

    const receipt = await delivery.deliver(request());
    const claimed = await owner.claimQueued(() => undefined);
    await owner.settle(receipt.receipt, null);

    expect(receipt.lane).toBe('queued');
    expect(chats()).toHaveLength(0);
    expect(claimed).toEqual([{ receipt: receipt.receipt, jobName: 'Build watch', message: 'hello' }]);
    const record = JSON.parse(readFileSync(join(profile, 'runtime', 'bot_chat', `${receipt.receipt}.json`), 'utf8'));
    expect(record.status).toBe('settled');
    await owner.release();
    expect(existsSync(join(profile, 'runtime', 'bot_chat', 'owner.json'))).toBe(false);
  });

  it('takes the command-line lane when the owner died without releasing its lease', async () => {
    await mkdir(join(profile, 'runtime', 'bot_chat'), { recursive: true });
    const lease = new Date(Date.now() + 60_000).toISOString();
    await writeFile(join(profile, 'runtime', 'bot_chat', 'owner.json'), JSON.stringify({ pid: 2 ** 22 + 12345, lease_expires_at: lease }));

    const receipt = await delivery.deliver(request());

    expect(receipt.lane).toBe('delivered');
    expect(chats()).toHaveLength(1);
  });

  it("takes the command-line lane when the owner's lease expired", async () => {
    await mkdir(join(profile, 'runtime', 'bot_chat'), { recursive: true });
    const expired = new Date(Date.now() - 1_000).toISOString();
    await writeFile(join(profile, 'runtime', 'bot_chat', 'owner.json'), JSON.stringify({ pid: process.pid, lease_expires_at: expired }));

    expect((await delivery.deliver(request())).lane).toBe('delivered');
  });

  it("fails with the chat's stderr and marks the record failed", async () => {
    await expect(delivery.deliver(request({ message: '[fail]' }))).rejects.toThrow(/exited with code 3: chat refused/);
    const files = (await readdir(join(profile, 'runtime', 'bot_chat'))).filter((name) => name.endsWith('.json'));
    expect(JSON.parse(readFileSync(join(profile, 'runtime', 'bot_chat', files[0]!), 'utf8')).status).toBe('failed');
  });

  it('reports a mailbox record that is not JSON once and leaves it alone', async () => {
    const owner = new FileBotChatOwner(agentPathsFor(profile));
    await owner.register();
    const broken = join(profile, 'runtime', 'bot_chat', 'broken.json');
    await writeFile(broken, 'not json');
    const reported: string[] = [];

    await owner.claimQueued((file) => reported.push(file));
    await owner.claimQueued((file) => reported.push(file));

    expect(reported).toEqual([broken]);
    expect(readFileSync(broken, 'utf8')).toBe('not json');
    await owner.release();
  });

  it('refuses a second owner while the first is live', async () => {
    const first = new FileBotChatOwner(agentPathsFor(profile));
    await first.register();
    await writeFile(
      join(profile, 'runtime', 'bot_chat', 'owner.json'),
      JSON.stringify({ pid: process.ppid, lease_expires_at: new Date(Date.now() + 60_000).toISOString() }),
    );

    expect(await new FileBotChatOwner(agentPathsFor(profile)).register()).toBe(false);
  });

  it('says a missing profile does not exist, naming it', async () => {
    expect(await delivery.problemWith('ghost')).toContain('"ghost"');
    expect(await delivery.problemWith('work')).toBeNull();
    expect(await delivery.problemWith(null)).toBeNull();
  });
});
