// Run as a child process by FileTickLock.test.ts: takes the tick lock of the AGENT_HOME given as
// the first argument, prints "held" (or "busy"), and releases it when its stdin closes.
import 'reflect-metadata';
import { FileTickLock } from '../../src/adapters/persistence/FileTickLock.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';

const [home] = process.argv.slice(2);
if (!home) throw new Error('usage: holdTickLockChild <home>');
const lease = await new FileTickLock(agentPathsFor(home)).tryAcquire();
process.stdout.write(lease ? 'held\n' : 'busy\n');
process.stdin.resume();
process.stdin.on('end', () => {
  void lease?.release().then(() => process.exit(0));
});
