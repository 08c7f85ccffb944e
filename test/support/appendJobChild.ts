// Run as a child process by FileJobRepository.test.ts: appends one job to the store of the
// AGENT_HOME given as the first argument, with the id given as the second.
import 'reflect-metadata';
import { FileJobRepository } from '../../src/adapters/persistence/FileJobRepository.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { anHourlyJob } from './jobs.js';

const [home, id] = process.argv.slice(2);
if (!home || !id) throw new Error('usage: appendJobChild <home> <job id>');
const repo = new FileJobRepository(agentPathsFor(home));
await repo.modify((jobs) => ({ jobs: [...jobs, anHourlyJob(id)], result: undefined }));
