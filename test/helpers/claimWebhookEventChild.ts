// Run as a child process by FileWebhookInbox.test.ts: accepts one event into the inbox under the
// AGENT_HOME given as the first argument, claims it, prints its id and its pid, and waits to be killed.
import 'reflect-metadata';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { MarkedOrphanProcesses } from '../../src/adapters/process/MarkedOrphanProcesses.js';
import { HostProcessIdentity } from '../../src/adapters/system/HostProcessIdentity.js';
import { SystemClock } from '../../src/adapters/system/SystemClock.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';

const [home] = process.argv.slice(2);
if (!home) throw new Error('usage: claimWebhookEventChild <home>');
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const inbox = new FileWebhookInbox(agentPathsFor(home), new HostProcessIdentity(), new SystemClock(), silent, new MarkedOrphanProcesses());
await inbox.accept(anEvent(1));
const event = await inbox.claimNext();
process.stdout.write(`${event ? event.id : 'none'} ${process.pid}\n`);
setInterval(() => undefined, 60_000);
