import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { errorSentence, inAScratchHomeEachTest, runAgent, writeHomeFile } from './agentCli.js';

/** `agent chat` as a user meets it: the real executable, a scratch home, the stand-in model. */
describe('agent chat, end to end', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('answers one question given with -q and exits 0', async () => {
    const run = await runAgent(['chat', '-q', 'What time is it?'], { home });

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe('Answer to: What time is it?\n');
  });

  it('reads the question from --query-file, and from stdin with "-"', async () => {
    const file = await writeHomeFile(home, 'question.txt', 'Summarise my week');

    const fromFile = await runAgent(['chat', '--query-file', file], { home });
    const fromStdin = await runAgent(['chat', '--query-file', '-'], { home, input: 'From stdin' });

    expect(fromFile.stdout).toBe('Answer to: Summarise my week\n');
    expect(fromStdin.stdout).toBe('Answer to: From stdin\n');
  });

  it('exits 1 with one sentence when the run fails', async () => {
    await writeHomeFile(home, 'config.yaml', 'model:\n  provider: command\n  command: ["sh", "-c", "echo broken >&2; exit 3"]\n');

    const run = await runAgent(['chat', '-q', 'hi'], { home });

    expect(run.code).toBe(1);
    expect(errorSentence(run)).toMatch(/exit.*3.*broken/s);
  });

  it('exits 1 saying how to configure a model when none is', async () => {
    await writeHomeFile(home, 'config.yaml', 'timezone: UTC\n');

    const run = await runAgent(['chat', '-q', 'hi'], { home });

    expect(run.code).toBe(1);
    expect(errorSentence(run)).toContain('No model is configured');
  });

  it('refuses a missing profile and creates it with --create-if-missing, config included', async () => {
    const missing = await runAgent(['chat', '--profile', 'work', '-q', 'hi'], { home });
    const created = await runAgent(['chat', '--profile', 'work', '--create-if-missing', '-q', 'hi'], { home });

    expect(missing.code).toBe(1);
    expect(errorSentence(missing)).toContain('add --create-if-missing');
    expect(created).toMatchObject({ code: 0, stdout: 'Answer to: hi\n' });
    expect(readFileSync(join(home, 'profiles', 'work', 'config.yaml'), 'utf8')).toBe(readFileSync(join(home, 'config.yaml'), 'utf8'));
  });

  it('keeps jobs of a profile apart from the main home', async () => {
    const created = await runAgent(['cron', 'create', 'every 1h', 'Profile job'], {
      home: join(home, 'profiles', 'work'),
    });
    await runAgent(['chat', '--profile', 'work', '-q', 'hi'], { home });

    expect(created.code).toBe(0);
    expect(existsSync(join(home, 'profiles', 'work', 'cron', 'jobs.json'))).toBe(true);
    expect(existsSync(join(home, 'cron', 'jobs.json'))).toBe(false);
  });

  it('needs a terminal for a conversation (exit 2)', async () => {
    const run = await runAgent(['chat'], { home });

    expect(run.code).toBe(2);
    expect(errorSentence(run)).toContain('-q');
  });

  it('runs --provider openai on its default model, gpt-4o-mini, not on model.name', async () => {
    const llm = await FakeLlmServer.start();
    try {
      llm.always = replies.text('Hello from the default model.');
      // The built-in openai provider, only pointed at the stand-in server: its default model stays.
      await writeHomeFile(
        home,
        'config.yaml',
        [
          'model:',
          '  provider: command',
          '  name: small',
          '  command: ["true"]',
          'providers:',
          '  openai:',
          `    base_url: ${llm.openAiBaseUrl}`,
          '',
        ].join('\n'),
      );

      const run = await runAgent(['chat', '-q', 'hi', '--provider', 'openai', '--no-tick'], { home, env: { OPENAI_API_KEY: 'test-key' } });

      expect(run).toMatchObject({ code: 0, stdout: 'Hello from the default model.\n' });
      expect(llm.requests.map((request) => request.body.model)).toEqual(['gpt-4o-mini']);
    } finally {
      await llm.close();
    }
  });
});
