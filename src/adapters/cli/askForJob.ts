import { createInterface } from 'node:readline';
import { parseSchedule, SCHEDULE_FORMS } from '../../domain/Schedule.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import { CliError } from './CliError.js';
import { writeLine, type CliIO } from './CliIO.js';

export interface JobAnswers {
  schedule: string;
  prompt: string;
  name: string | null;
  deliver: string | null;
}

const ATTEMPTS = 3;

/** Ctrl-C was pressed while a question was asked. */
class Interrupted extends Error {}

/**
 * Asks for a new job's details on the terminal; re-asks a schedule that does not parse. Answers
 * typed ahead or pasted several lines at once are kept for the questions that follow. Null when
 * the person pressed Ctrl-C: they changed their mind, and nothing is to be created.
 */
export async function askForJob(io: CliIO, timeZone: string): Promise<JobAnswers | null> {
  const terminal = createInterface({ input: io.stdin, output: io.stdout, terminal: true });
  // `question()` drops lines that arrive before it is called; the iterator buffers them.
  const lines = terminal[Symbol.asyncIterator]();
  // On a terminal in raw mode Ctrl-C reaches readline as a key, not as a signal to the process.
  const interruption = new Promise<never>((_, reject) =>
    terminal.once('SIGINT', () => {
      // The prompt's line is left unfinished otherwise; a shell ends it the same way.
      writeLine(io.stdout);
      reject(new Interrupted());
    }),
  );
  interruption.catch(() => undefined);
  const ask = async (question: string): Promise<string> => {
    terminal.setPrompt(question);
    terminal.prompt();
    const line = await Promise.race([lines.next(), interruption]);
    if (line.done) {
      throw new CliError(ERROR_CODES.CLI.INPUT_ENDED, 'The input ended before every question was answered; no job was created.');
    }
    return line.value.trim();
  };
  try {
    let schedule = '';
    for (let attempt = 1; schedule === ''; attempt += 1) {
      const answer = await ask(`Schedule (${SCHEDULE_FORMS.flatMap((form) => form.examples).join(' | ')}): `);
      try {
        parseSchedule(answer, new Date(), timeZone);
        schedule = answer;
      } catch (error) {
        if (!(error instanceof AppError) || attempt >= ATTEMPTS) throw error;
        writeLine(io.stderr, error.message);
      }
    }
    let prompt = '';
    while (prompt === '') prompt = await ask('Prompt (a self-contained task): ');
    const name = await ask('Name (Enter for the start of the prompt): ');
    const deliver = await ask('Deliver to (Enter for origin; local, telegram:<chat_id>, …): ');
    return { schedule, prompt, name: name || null, deliver: deliver || null };
  } catch (error) {
    if (error instanceof Interrupted) return null;
    throw error;
  } finally {
    terminal.close();
  }
}
