// Run as a child process by FileWebhookInbox.test.ts: accepts one event into the inbox under the
// AGENT_HOME given as the first argument, claims it, waits until its claim record is in the journal
// (the inbox writes it without waiting), prints its id and its pid, and waits to be killed.
import 'reflect-metadata';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { MarkedOrphanProcesses } from '../../src/adapters/process/MarkedOrphanProcesses.js';
import { HostProcessIdentity } from '../../src/adapters/system/HostProcessIdentity.js';
import { SystemClock } from '../../src/adapters/system/SystemClock.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';

const [home] = process.argv.slice(2);
if (!home) throw new Error('usage: claimWebhookEventChild <home>');
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const paths = agentPathsFor(home);
const inbox = new FileWebhookInbox(paths, new HostProcessIdentity(), new SystemClock(), silent, new MarkedOrphanProcesses());
await inbox.accept(anEvent(1));
const event = await inbox.claimNext();
// Killed before its claim is written, the run would count as never started.
const claimWritten = async () => {
  for (const name of await readdir(paths.webhookInboxDir)) {
    if (name.endsWith('.ndjson') && (await readFile(join(paths.webhookInboxDir, name), 'utf8')).includes('{"claim":')) return true;
  }
  return false;
};
while (event && !(await claimWritten())) await new Promise((resolve) => setTimeout(resolve, 5));
process.stdout.write(`${event ? event.id : 'none'} ${process.pid}\n`);
setInterval(() => undefined, 60_000);
