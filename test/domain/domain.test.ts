import { parseDeliveryTargets } from '../../src/domain/DeliveryTarget.js';
import { findJob } from '../../src/domain/jobLookup.js';
import { readJobRecord } from '../../src/domain/JobRecord.js';
import { scriptSaysSleep } from '../../src/domain/RunContext.js';
import { isSilentResponse } from '../../src/domain/response.js';
import { assertTimeZone } from '../../src/domain/zonedTime.js';

describe('[SILENT] detection', () => {
  it.each([
    ['[SILENT]', true],
    ['  [silent]  ', true],
    ['[SILENT] nothing new today', true],
    ['Looked at 4 feeds.\nNothing new.\n[Silent]\n', true],
    ['Nothing new. [SILENT] here', true],
    ['Checked the feeds: [silent] (nothing to report)', true],
    ['[SILENT', false],
    ['All done.', false],
  ])('%j → %s', (text, silent) => {
    expect(isSilentResponse(text)).toBe(silent);
  });
});

describe('delivery targets', () => {
  it.each([
    ['local', { kind: 'local' }],
    ['origin', { kind: 'origin' }],
    ['telegram', { kind: 'platform', platform: 'telegram', destination: null, threadId: null }],
    ['telegram:-1001234:17', { kind: 'platform', platform: 'telegram', destination: '-1001234', threadId: '17' }],
    ['telegram:@alerts', { kind: 'platform', platform: 'telegram', destination: '@alerts' }],
    ['slack:#ops', { kind: 'platform', platform: 'slack', destination: '#ops' }],
    ['telegram:#ops', { kind: 'platform', platform: 'telegram', destination: '#ops', threadId: null }],
    ['sms:#on-call', { kind: 'platform', platform: 'sms', destination: '#on-call' }],
    [
      'slack:C0123ABCDEF:1712345678.123456',
      { kind: 'platform', platform: 'slack', destination: 'C0123ABCDEF', threadId: '1712345678.123456' },
    ],
    ['discord:123456:789', { kind: 'platform', platform: 'discord', destination: '123456', threadId: '789' }],
    ['matrix:!room:example.org', { kind: 'platform', platform: 'matrix', destination: '!room:example.org' }],
    ['signal:group:abc=', { kind: 'platform', platform: 'signal', destination: 'group:abc=' }],
    ['sms:+15551234567', { kind: 'platform', platform: 'sms', destination: '+15551234567' }],
    ['email:ops@example.com', { kind: 'platform', platform: 'email', destination: 'ops@example.com' }],
    ['mattermost:any thing', { kind: 'platform', platform: 'mattermost', destination: 'any thing' }],
    ['bot-chat:work', { kind: 'bot-chat', profile: 'work' }],
  ])('parses %j', (text, expected) => {
    expect(parseDeliveryTargets(text)).toEqual([expect.objectContaining(expected)]);
  });

  it('parses several comma-separated targets', () => {
    expect(parseDeliveryTargets('local, telegram').map((t) => t.kind)).toEqual(['local', 'platform']);
  });

  it.each([
    ['pigeon', /unknown platform "pigeon"/],
    ['sms:12345', /not a valid sms destination/],
    ['telegram:abc', /not a valid telegram destination/],
    ['email:not-an-address', /not a valid email destination/],
  ])('rejects %j', (text, message) => {
    expect(() => parseDeliveryTargets(text)).toThrow(message);
  });

  it.each(['notats', '1712345678', '1712345678.', '.123456', '1712345678-123456', 'p1712345678123456'])(
    'refuses a Slack thread part %j that is not a Slack timestamp, in one sentence naming the form',
    (thread) => {
      expect(() => parseDeliveryTargets(`local,slack:C0123ABCDEF:${thread}`)).toThrow(
        `Delivery target "slack:C0123ABCDEF:${thread}" names the thread "${thread}", which is not a Slack timestamp; use the ts of the thread's first message, such as 1712345678.123456.`,
      );
    },
  );
});

describe('stored records', () => {
  const base = { id: 'abc123abc123', prompt: 'p', schedule: { kind: 'interval', expr: 'every 5m', display: 'every 5m', minutes: 5 } };

  it('promotes a legacy skill to skills', () => {
    const reading = readJobRecord({ ...base, skill: 'triage' }, 0);
    expect(reading.ok && reading.job.skills).toEqual(['triage']);
  });

  it('reports a record without a usable schedule instead of guessing', () => {
    expect(readJobRecord({ ...base, schedule: { kind: 'weekly', expr: 'mondays' } }, 3)).toEqual({
      ok: false,
      problem: { index: 3, id: 'abc123abc123', reason: 'its schedule cannot be read' },
    });
  });

  it.each([
    ['99 * * * *', 'the minute field "99" has 99, which is out of range'],
    ['*/61 * * * *', 'the minute field "*/61" has step 61, which is not between 1 and 60'],
    ['0 0 * * 1-5/9', 'the day-of-week field "1-5/9" has step 9, which is not between 1 and 7'],
    ['0 0 9 * * 1', 'it has 6 fields, not 5 (minute hour day-of-month month day-of-week)'],
  ])('reports a stored cron expression %j that is not valid, naming the field', (expr, fault) => {
    expect(readJobRecord({ ...base, schedule: { kind: 'cron', expr, display: expr } }, 3)).toEqual({
      ok: false,
      problem: { index: 3, id: 'abc123abc123', reason: `its cron expression ${JSON.stringify(expr)} is not valid: ${fault}` },
    });
  });

  it('reports something that is not an object', () => {
    expect(readJobRecord('hello', 0)).toMatchObject({ ok: false, problem: { reason: 'it is not an object' } });
  });
});

describe('time zones', () => {
  it('refuses an unknown zone with a clear sentence', () => {
    expect(() => assertTimeZone('Mars/Olympus')).toThrow('"Mars/Olympus" is not a valid time zone; use an IANA name');
  });
});

describe('the wakeAgent gate', () => {
  it('reads only the last non-empty line', () => {
    expect(scriptSaysSleep('x\n{"wakeAgent": false}\n\n')).toBe(true);
    expect(scriptSaysSleep('{"wakeAgent": false}\nmore')).toBe(false);
    expect(scriptSaysSleep('{"wakeAgent": true}')).toBe(false);
  });
});

describe('finding a job', () => {
  it('prefers an exact id', () => {
    const jobs = [
      { id: 'aaa', name: 'bbb' },
      { id: 'bbb', name: 'x' },
    ] as never[];
    expect(findJob(jobs, 'bbb')).toMatchObject({ id: 'bbb' });
  });
});

describe('the wall clock of a zone that is UTC at every instant', () => {
  it('is read from Date, and agrees with the runtime formatter to the second', async () => {
    const { wallClockAt } = await import('../../src/domain/zonedTime.js');
    const formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: 'Etc/UCT',
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    for (const instant of [new Date('2026-03-29T00:59:59.999Z'), new Date('2024-02-29T23:00:00.500Z'), new Date('1999-12-31T23:59:59Z')]) {
      const parts = Object.fromEntries(formatter.formatToParts(instant).map((part) => [part.type, Number(part.value)]));
      const expected = {
        year: parts.year,
        month: parts.month,
        day: parts.day,
        hour: parts.hour,
        minute: parts.minute,
        second: parts.second,
      };
      for (const zone of ['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT']) expect(wallClockAt(instant, zone)).toEqual(expected);
    }
  });
});
