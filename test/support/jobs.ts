import { createJob, type Job } from '../../src/domain/Job.js';
import { parseSchedule } from '../../src/domain/Schedule.js';

export const CREATED_AT = new Date('2026-03-01T12:00:00Z');

/** A fresh hourly job named after its id, as `agent cron create` would make it. */
export function anHourlyJob(id: string, prompt = `Report on ${id}`): Job {
  return createJob({ id, name: `job ${id}`, prompt, schedule: parseSchedule('every 1h', CREATED_AT, 'UTC') }, CREATED_AT, 'UTC');
}

/** A 12-hex-character job id made from a number, like SequentialIds gives. */
export function jobIdFor(n: number): string {
  return n.toString(16).padStart(12, '0');
}
