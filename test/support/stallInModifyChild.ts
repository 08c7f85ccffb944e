// Run as a child process by FileJobRepository.test.ts: a read-modify-write that appends a job
// with the given id, but stalls inside its change — holding the store's lock with the snapshot
// it read — printing "holding" and waiting until the file `<home>/go` exists. The test can
// SIGSTOP or kill it there.
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FileJobRepository } from '../../src/adapters/persistence/FileJobRepository.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { anHourlyJob } from './jobs.js';

const [home, id] = process.argv.slice(2);
if (!home || !id) throw new Error('usage: stallInModifyChild <home> <job id>');
const repo = new FileJobRepository(agentPathsFor(home));
const pause = new Int32Array(new SharedArrayBuffer(4));
await repo.modify((jobs) => {
  process.stdout.write('holding\n');
  // A synchronous stall, as a process stopped or swapped out mid-change would be.
  while (!existsSync(join(home, 'go'))) Atomics.wait(pause, 0, 0, 10);
  return { jobs: [...jobs, anHourlyJob(id)], result: undefined };
});
