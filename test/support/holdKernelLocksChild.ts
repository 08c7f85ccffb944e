// Run with `node --expose-gc` as a child process by kernelLocksUnderGc.test.ts: takes every lock
// this program holds for a while in the AGENT_HOME given as the first argument (the webhook
// inbox's own journal and one it takes over from a dead process, the chat receiving role, the
// job store's lock, the tick lock), then drops every reference to what holds them and runs the
// garbage collector every few milliseconds. It prints "held <pid>" once the collector has run a
// few times, and waits to be killed. A lock whose open file only its owner object referenced
// would be gone by then: the collector closes such a file, and the kernel lets its lock go.
import 'reflect-metadata';
import { FileChatReceiverLease } from '../../src/adapters/chat/FileChatReceiverLease.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { acquireFileLock } from '../../src/adapters/persistence/fileLock.js';
import { FileTickLock } from '../../src/adapters/persistence/FileTickLock.js';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { HostProcessIdentity } from '../../src/adapters/system/HostProcessIdentity.js';
import { SystemClock } from '../../src/adapters/system/SystemClock.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';

const [home] = process.argv.slice(2);
if (!home) throw new Error('usage: node --expose-gc holdKernelLocksChild <home>');
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with node --expose-gc');

/** Takes the locks; nothing that holds them is returned or kept. */
async function takeLocks(): Promise<void> {
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const noOrphans = { markChildrenOf() {}, killOrphansOf: async () => 0, killOrphansOfTheDead: async () => new Map<string, number>() };
  const paths = agentPathsFor(home!);
  const inbox = new FileWebhookInbox(paths, new HostProcessIdentity(), new SystemClock(), silent, noOrphans);
  // Opens this process's journal and takes over the dead one the test left (its event stays pending).
  if ((await inbox.recover()) < 0) throw new Error('unreachable');
  await inbox.accept(anEvent(2));
  if (!(await new FileChatReceiverLease(home!).tryTake())) throw new Error('the chat receiving role is taken');
  // Makes the cron directory the job store's lock lives in.
  if ((await new FileTickLock(paths).tryAcquire()) === null) throw new Error('the tick lock is taken');
  await acquireFileLock(`${paths.jobsFile}.lock`);
}

await takeLocks();
let collections = 0;
setInterval(() => {
  collect();
  collections += 1;
  if (collections === 20) process.stdout.write(`held ${process.pid}\n`);
}, 2);
