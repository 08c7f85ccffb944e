import { createInterface } from 'node:readline/promises';
import { parseSchedule } from '../../domain/Schedule.js';
import { AppError } from '../../domain/errors.js';
import { writeLine, type CliIO } from './CliIO.js';

export interface JobAnswers {
  schedule: string;
  prompt: string;
  name: string | null;
  deliver: string | null;
}

const ATTEMPTS = 3;

/** Asks for a new job's details on the terminal; re-asks a schedule that does not parse. */
export async function askForJob(io: CliIO, timeZone: string): Promise<JobAnswers> {
  const terminal = createInterface({ input: io.stdin, output: io.stdout, terminal: true });
  try {
    let schedule = '';
    for (let attempt = 1; schedule === ''; attempt += 1) {
      const answer = (await terminal.question('Schedule (every 30m | 0 9 * * 1-5 | 2027-01-15T14:00 | 30m): ')).trim();
      try {
        parseSchedule(answer, new Date(), timeZone);
        schedule = answer;
      } catch (error) {
        if (!(error instanceof AppError) || attempt >= ATTEMPTS) throw error;
        writeLine(io.stderr, error.message);
      }
    }
    let prompt = '';
    while (prompt === '') prompt = (await terminal.question('Prompt (a self-contained task): ')).trim();
    const name = (await terminal.question('Name (Enter for the start of the prompt): ')).trim();
    const deliver = (await terminal.question('Deliver to (Enter for origin; local, telegram:<chat_id>, …): ')).trim();
    return { schedule, prompt, name: name || null, deliver: deliver || null };
  } finally {
    terminal.close();
  }
}
