import { readFileSync } from 'node:fs';
import type { Arguments } from 'yargs';
import type { RunDueJobs, TickReport } from '../../../src/application/cron/RunDueJobs.js';
import { likelyName, usageErrorFor, MISSING_COMMAND } from '../../../src/adapters/cli/commandLevel.js';
import { tickIgnoredWarning, ticksFirst } from '../../../src/adapters/cli/tickFlag.js';
import { changesJobs, refuseChangesInsideCronRun } from '../../../src/adapters/cli/cronRunGuard.js';
import { argument, oneOf, repeatableText, text, wholeNumber } from '../../../src/adapters/cli/flagValues.js';
import { implicitTick } from '../../../src/adapters/cli/implicitTick.js';
import { AppError } from '../../../src/domain/errors.js';
import { agentVersion } from '../../../src/composition/cli/agentVersion.js';
import { fakeTerminal } from '../../support/fakeTerminal.js';

describe('flag value checks', () => {
  const repeat = wholeNumber('--repeat', { min: 1 });

  it('turns a whole number into a number', () => {
    expect([repeat('3'), repeat(' 12 '), repeat('+4')]).toEqual([3, 12, 4]);
  });

  it.each([
    ['abc', '"abc"'],
    ['2.5', '"2.5"'],
    ['-1', '"-1"'],
    ['0', '"0"'],
    ['1e3', '"1e3"'],
    ['0x10', '"0x10"'],
    ['', 'nothing'],
    ['99999999999999999999', '"99999999999999999999"'],
  ])('refuses %j in one sentence naming the flag, the value and what is expected', (given, quoted) => {
    expect(() => repeat(given)).toThrow(`--repeat must be a whole number of 1 or more, not ${quoted}.`);
  });

  it('says what 0 means where 0 is allowed', () => {
    const editRepeat = wholeNumber('--repeat', { min: 0, note: '0 means no limit' });

    expect(editRepeat('0')).toBe(0);
    expect(() => editRepeat('x')).toThrow('--repeat must be a whole number of 0 or more (0 means no limit), not "x".');
  });

  it('refuses a flag given twice', () => {
    expect(() => repeat(['1', '2'])).toThrow('--repeat was given 2 times; give it once.');
  });

  it('checks a value against its choices', () => {
    const format = oneOf('--log-format', ['text', 'json'] as const);

    expect(format('json')).toBe('json');
    expect(() => format('xml')).toThrow('--log-format must be one of text, json, not "xml".');
  });

  it('makes usage errors (exit 2)', () => {
    expect(() => repeat('x')).toThrow(expect.objectContaining({ code: 'CLI.USAGE' }) as unknown as Error);
  });
});

describe('--no-<flag> and empty values (yargs reads --no-x as x = false)', () => {
  const name = text('--name');
  const deliver = text('--deliver', { value: 'local', means: 'answers stay local' });
  const skills = repeatableText('--skill', { value: [] as string[], means: 'no skills' });

  it('takes a text as given and a repeated flag as its list', () => {
    expect([name('Digest'), name(' spaced ')]).toEqual(['Digest', ' spaced ']);
    expect(skills(['triage', 'tone'])).toEqual(['triage', 'tone']);
    expect(skills('triage')).toEqual(['triage']);
  });

  it('gives the documented meaning of a --no- form', () => {
    expect(deliver(false)).toBe('local');
    expect(skills(false)).toEqual([]);
    expect(wholeNumber('--repeat', { min: 1, negation: { value: null, means: 'no limit' } })(false)).toBeNull();
  });

  it('refuses a --no- form that means nothing, in one sentence naming it', () => {
    expect(() => name(false)).toThrow('--no-name is not an option; give --name a value or leave it out.');
    expect(() => text('-q')(false)).toThrow('--no-q is not an option; give -q a value or leave it out.');
    expect(() => repeatableText('--events')(false)).toThrow('--no-events is not an option');
    expect(() => wholeNumber('--limit', { min: 1 })(false)).toThrow('--no-limit is not an option');
    expect(() => oneOf('--log-format', ['text'])(false)).toThrow('--no-log-format is not an option');
    expect(() => argument('prompt')(false)).toThrow('--no-prompt is not an option; give the prompt as an argument.');
  });

  it('refuses an empty or blank value, pointing to the --no- form where there is one', () => {
    expect(() => name('')).toThrow('--name needs a value; give one or leave the flag out.');
    expect(() => deliver('  ')).toThrow('--deliver needs a value; give one, or give --no-deliver (answers stay local).');
    expect(() => skills(['triage', ''])).toThrow('--skill needs a value; give one, or give --no-skill (no skills).');
  });

  it('refuses a flag and its --no- form together, and a text flag given twice', () => {
    expect(() => skills(['triage', false])).toThrow('Give either --skill or --no-skill, not both.');
    expect(() => name(['a', 'b'])).toThrow('--name was given 2 times; give it once.');
    expect(() => argument('schedule')(['a', 'b'])).toThrow('The schedule was given 2 times; give it once.');
  });
});

describe('usage failures as one sentence', () => {
  const top = { path: [], commands: ['cron', 'chat', 'gateway'] };
  const cron = { path: ['cron'], commands: ['list', 'create'] };
  const cronList = { path: ['cron', 'list'], commands: [], usage: 'agent cron list' };

  it('names an unknown command and lists those of its level', () => {
    expect(usageErrorFor('Unknown command: status', top).message).toBe(
      'Unknown command "status"; the commands are: cron, chat, gateway (see "agent --help").',
    );
    expect(usageErrorFor('Unknown commands: frob, more', cron).message).toBe(
      'Unknown command "frob"; the cron commands are: list, create (see "agent cron --help").',
    );
  });

  it('lists the commands when none was named', () => {
    expect(usageErrorFor(MISSING_COMMAND, cron).message).toBe(
      'Name a cron command; the cron commands are: list, create (see "agent cron --help").',
    );
  });

  it('calls an extra word below a leaf command an unknown argument', () => {
    expect(usageErrorFor('Unknown command: foo', cronList).message).toBe(
      'Unknown argument: foo; "agent cron list" takes no such argument (see "agent cron list --help").',
    );
  });

  it("puts yargs' messages on one line, pointing to the help, and leaves a finished sentence alone", () => {
    expect(usageErrorFor('Invalid values:\n  Argument: x, Given: "y"', cronList).message).toBe(
      'Invalid values: Argument: x, Given: "y" (see "agent cron list --help").',
    );
    expect(usageErrorFor('--repeat must be a whole number of 1 or more, not "x".', cronList).message).toBe(
      '--repeat must be a whole number of 1 or more, not "x".',
    );
  });
});

describe('"did you mean" for a mistyped command or flag', () => {
  const top = { path: [], commands: ['cron', 'chat', 'db'], names: ['cron', 'chat', 'db'] };
  const cron = { path: ['cron'], commands: ['list', 'redeliver', 'remove'], names: ['list', 'redeliver', 'remove', 'ls', 'rm', 'delete'] };
  const cronList = {
    path: ['cron', 'list'],
    commands: [],
    usage: 'agent cron list',
    flags: ['debug', 'tick', 'help', 'h', 'version', 'json'],
  };

  it('suggests the command within two edits (one for a short word), or the one a longer word begins', () => {
    expect(likelyName('crn', top.names)).toBe('cron');
    expect(likelyName('lsit', cron.names)).toBe('list');
    expect(likelyName('rmeove', cron.names)).toBe('remove');
    expect(likelyName('redel', cron.names)).toBe('redeliver');
    // Two letters off in a three-letter word, or a single letter, is no likely intent.
    expect(likelyName('abc', top.names)).toBeNull();
    expect(likelyName('x', ['q'])).toBeNull();
    expect(likelyName('frob', cron.names)).toBeNull();
  });

  it('names the likely command at each level instead of listing them all', () => {
    expect(usageErrorFor('Unknown command: crn', top).message).toBe('Unknown command "crn"; did you mean "cron"? (see "agent --help").');
    expect(usageErrorFor('Unknown command: lsit', cron).message).toBe(
      'Unknown command "lsit"; did you mean "list"? (see "agent cron --help").',
    );
    expect(usageErrorFor('Unknown command: frob', cron).message).toBe(
      'Unknown command "frob"; the cron commands are: list, redeliver, remove (see "agent cron --help").',
    );
  });

  it('names the likely flag as it was typed, --no- kept', () => {
    const typed = (...words: string[]) => ['cron', 'list', ...words];
    expect(usageErrorFor('Unknown argument: jsn', cronList, typed('--jsn')).message).toBe(
      'Unknown flag --jsn; did you mean --json? (see "agent cron list --help").',
    );
    expect(usageErrorFor('Unknown argument: tik', cronList, typed('--no-tik')).message).toBe(
      'Unknown flag --no-tik; did you mean --no-tick? (see "agent cron list --help").',
    );
    expect(usageErrorFor('Unknown arguments: jsno, frob', cronList, typed('--jsno=1', '--frob')).message).toBe(
      'Unknown flag --jsno; did you mean --json? (see "agent cron list --help").',
    );
    // Nothing close, or a stray word rather than a flag: yargs' own words, with the pointer to the help.
    expect(usageErrorFor('Unknown argument: frobnicate', cronList, typed('--frobnicate')).message).toBe(
      'Unknown argument: frobnicate (see "agent cron list --help").',
    );
    expect(usageErrorFor('Unknown argument: jsn', cronList, typed('jsn')).message).toBe(
      'Unknown argument: jsn (see "agent cron list --help").',
    );
  });
});

describe('--no-tick on every command', () => {
  it('means something on the commands that run due jobs first', () => {
    expect([ticksFirst('cron', 'list'), ticksFirst('cron', 'run'), ticksFirst('chat', '')]).toEqual([true, true, true]);
    expect([ticksFirst('cron', 'tick'), ticksFirst('status', ''), ticksFirst('webhook', 'list'), ticksFirst('gateway', '')]).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('is ignored with a warning that says why everywhere else', () => {
    expect(tickIgnoredWarning(['cron', 'ls'])).toBeNull();
    expect(tickIgnoredWarning(['status'])).toBe('warning: --no-tick has no effect on "agent status": it does not run due jobs.');
    expect(tickIgnoredWarning(['webhook', 'list'])).toBe(
      'warning: --no-tick has no effect on "agent webhook list": it does not run due jobs.',
    );
    expect(tickIgnoredWarning(['cron', 'tick'])).toMatch(
      /^warning: --no-tick has no effect on "agent cron tick": running the due jobs is what it does\.$/,
    );
    expect(tickIgnoredWarning(['gateway'])).toMatch(
      /^warning: --no-tick has no effect on "agent gateway": it fires due jobs on their schedule/,
    );
  });
});

describe('the recursion guard of the command line', () => {
  const argv = (...words: string[]) => ({ _: words, $0: 'agent' }) as Arguments;

  it('covers exactly the commands that change jobs or subscriptions', () => {
    const refused = [
      'create',
      'add',
      'edit',
      'pause',
      'disable',
      'resume',
      'enable',
      'run',
      'redeliver',
      'remove',
      'rm',
      'delete',
      'tick',
    ].map((command) => changesJobs('cron', command));
    const allowed = ['list', 'ls', 'show', 'runs', 'status'].map((command) => changesJobs('cron', command));

    expect(refused.every(Boolean)).toBe(true);
    expect(allowed.some(Boolean)).toBe(false);
    expect(['subscribe', 'remove', 'rm'].map((command) => changesJobs('webhook', command))).toEqual([true, true, true]);
    expect(['list', 'test', 'runs', 'redeliver'].map((command) => changesJobs('webhook', command))).toEqual([false, false, false, false]);
  });

  it("refuses a job-changing command only inside a cron run, naming the run's job", () => {
    const { io } = fakeTerminal(false);
    const outside = refuseChangesInsideCronRun(io);
    const inside = refuseChangesInsideCronRun({ ...io, cronRun: 'abc123' });

    expect(() => outside(argv('cron', 'create'))).not.toThrow();
    expect(() => inside(argv('cron', 'list'))).not.toThrow();
    expect(() => inside(argv('cron', 'create'))).toThrow(
      'This command changes jobs and cannot be used from inside a cron run (job abc123); scheduled runs may not create, change or schedule jobs.',
    );
    expect(() => inside(argv('webhook', 'subscribe'))).toThrow(
      expect.objectContaining({ code: 'CLI.INSIDE_CRON_RUN' }) as unknown as Error,
    );
  });
});

describe('the implicit tick before a command', () => {
  const report: TickReport = { lockBusy: false, ran: [], missed: [], recovered: [], skipped: [] };

  function tickThat(outcome: () => Promise<TickReport>) {
    let calls = 0;
    const runDueJobs = {
      execute: () => {
        calls += 1;
        return outcome();
      },
    } as unknown as RunDueJobs;
    return { runDueJobs, calls: () => calls };
  }

  function fileSystemError(code: string, path: string): AppError {
    const cause = Object.assign(new Error(`${code}: refused, mkdir '${path}'`), { code, path });
    return new AppError('TICK.UNAVAILABLE', 'Cannot take the tick lock.', { cause });
  }

  it('runs the tick and hands back its report', async () => {
    const { io } = fakeTerminal(false);
    const tick = tickThat(async () => report);

    await expect(implicitTick(tick.runDueJobs, io)).resolves.toBe(report);
  });

  it('does not tick at all inside a cron run', async () => {
    const { io, stderr } = fakeTerminal(false);
    const tick = tickThat(async () => report);

    await expect(implicitTick(tick.runDueJobs, { ...io, cronRun: 'abc' })).resolves.toBeNull();
    expect(tick.calls()).toBe(0);
    expect(stderr()).toBe('');
  });

  it.each(['EACCES', 'EPERM', 'EROFS'])('skips the tick with a one-line warning when the home cannot be written (%s)', async (code) => {
    const { io, stderr } = fakeTerminal(false);
    const tick = tickThat(() => Promise.reject(fileSystemError(code, '/home/ro/.agent/cron/.tick.lock')));

    await expect(implicitTick(tick.runDueJobs, io)).resolves.toBeNull();
    expect(stderr()).toBe(`warning: /home/ro/.agent/cron is not writable (${code}); due jobs were not run (the tick was skipped).\n`);
  });

  it('warns once however often the tick is skipped (a chat ticks every minute)', async () => {
    const { io, stderr } = fakeTerminal(false);
    const tick = tickThat(() => Promise.reject(fileSystemError('EROFS', '/mnt/ro/cron/.tick.lock')));

    await implicitTick(tick.runDueJobs, io);
    await implicitTick(tick.runDueJobs, io);

    expect(tick.calls()).toBe(2);
    expect(stderr().split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('passes any other failure on', async () => {
    const { io } = fakeTerminal(false);
    const broken = fileSystemError('ENOTDIR', '/home/x/cron/.tick.lock');
    const tick = tickThat(() => Promise.reject(broken));

    await expect(implicitTick(tick.runDueJobs, io)).rejects.toBe(broken);
  });
});

describe('agent --version from source', () => {
  it('is the version in package.json', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

    expect(agentVersion()).toBe(version);
  });
});
