import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileGatewayRegistry } from '../../src/adapters/persistence/FileGatewayRegistry.js';
import { FileWebhookBacklog } from '../../src/adapters/persistence/FileWebhookBacklog.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { acceptRecord, claimRecord, doneRecord, journalName } from '../../src/adapters/persistence/webhookJournal.js';
import type { WebhookEvent } from '../../src/domain/webhook/WebhookEvent.js';

const event = (id: string): WebhookEvent => ({
  id,
  route: 'github',
  event: 'push',
  deliveryId: id,
  receivedAt: '2026-03-01T12:00:00.000Z',
  payload: {},
});

describe('the files agent status reads', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-status-'));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('FileWebhookBacklog counts accepted events not done across journals, claimed ones included, and 0 without an inbox', async () => {
    const paths = agentPathsFor(home);
    expect(await new FileWebhookBacklog(paths).waiting()).toBe(0);
    await mkdir(paths.webhookInboxDir, { recursive: true });
    await writeFile(
      join(paths.webhookInboxDir, journalName('a:1')),
      acceptRecord(event('e1')) + acceptRecord(event('e2')) + claimRecord('e2') + doneRecord('e1'),
    );
    await writeFile(join(paths.webhookInboxDir, journalName('b:2')), `${acceptRecord(event('e3'))}{"accept":`);
    expect(await new FileWebhookBacklog(paths).waiting()).toBe(2);
  });

  it('FileWebhookBacklog counts the events of the earlier one-file-per-event layout too, not temporaries, files that are no event, or events a journal finished', async () => {
    const paths = agentPathsFor(home);
    const queued = join(paths.webhookInboxDir, 'queued');
    const claimed = join(paths.webhookInboxDir, 'claimed', encodeURIComponent('a:1'));
    await mkdir(queued, { recursive: true });
    await mkdir(claimed, { recursive: true });
    await writeFile(join(paths.webhookInboxDir, journalName('a:1')), acceptRecord(event('e1')) + doneRecord('e1'));
    await writeFile(join(queued, '001-e1.json'), JSON.stringify(event('e1')));
    await writeFile(join(queued, '002-e2.json'), JSON.stringify(event('e2')));
    await writeFile(join(queued, '.003-e3.json.tmp'), JSON.stringify(event('e3')));
    await writeFile(join(queued, '004-torn.json'), '{"id": "torn", "rou');
    await writeFile(join(claimed, '005-e5.json'), JSON.stringify(event('e5')));
    expect(await new FileWebhookBacklog(paths).waiting()).toBe(2);
  });

  it('FileGatewayRegistry writes a private file, reads it back and removes only its own registration', async () => {
    const registry = new FileGatewayRegistry(agentPathsFor(home));
    const mine = { pid: 10, host: 'h', startedAt: '2026-03-01T12:00:00.000Z', listener: null, provider: 'built-in ticker' };
    expect(await registry.read()).toBeNull();
    await registry.register(mine);
    expect(await registry.read()).toEqual(mine);
    expect((await stat(join(home, 'gateway.json'))).mode & 0o777).toBe(0o600);
    await registry.unregister({ ...mine, pid: 11 });
    expect(await registry.read()).toEqual(mine);
    await registry.unregister(mine);
    expect(await registry.read()).toBeNull();
  });
});
