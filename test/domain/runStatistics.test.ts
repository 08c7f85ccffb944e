import {
  costPerDayPerModel,
  countBy,
  countPerHour,
  dayKey,
  durationInWords,
  durationsPerSubject,
  lastDays,
  percentile,
  runsPerDay,
  runsPerHour,
} from '../../src/domain/runs/runStatistics.js';
import type { RunRecord, RunStatus } from '../../src/domain/runs/RunRecord.js';

const NOW = new Date('2026-06-20T10:30:00.000Z');

function run(started: string, status: RunStatus, extra: Partial<RunRecord> = {}): RunRecord {
  return {
    id: `${started}-${status}`,
    kind: 'cron',
    subject: 'job1',
    name: 'Digest',
    slot: null,
    event: null,
    delivery_id: null,
    started_at: started,
    finished_at: status === 'running' ? null : new Date(Date.parse(started) + 1000).toISOString(),
    status,
    model: null,
    prompt: null,
    answer: null,
    error: null,
    deliveries: [],
    ...extra,
  };
}

describe('runs per hour', () => {
  it('counts the runs of each of the last 24 hours by status, the current hour last, and none outside', () => {
    const runs = [
      run('2026-06-20T10:05:00.000Z', 'ok'),
      run('2026-06-20T10:29:59.000Z', 'error'),
      run('2026-06-20T09:59:59.999Z', 'ok'),
      run('2026-06-19T11:00:00.000Z', 'delivery_failed'),
      run('2026-06-19T10:59:59.999Z', 'ok'), // 24 h and more ago: outside
      run('2026-06-20T11:00:00.000Z', 'ok'), // the future (a clock ahead): outside
    ];
    const histogram = runsPerHour(runs, NOW, 24, 'UTC');
    expect(histogram.starts).toHaveLength(24);
    expect(new Date(histogram.starts[0]!).toISOString()).toBe('2026-06-19T11:00:00.000Z');
    expect(new Date(histogram.starts[23]!).toISOString()).toBe('2026-06-20T10:00:00.000Z');
    expect(histogram.labels[0]).toBe('11:00');
    expect(histogram.counts.ok[23]).toBe(1);
    expect(histogram.counts.error[23]).toBe(1);
    expect(histogram.counts.ok[22]).toBe(1);
    expect(histogram.counts.delivery_failed[0]).toBe(1);
    const total = Object.values(histogram.counts)
      .flat()
      .reduce((sum, count) => sum + count, 0);
    expect(total).toBe(4);
  });

  it('labels the hours in the zone asked for', () => {
    expect(runsPerHour([], NOW, 24, 'Asia/Tokyo').labels[23]).toBe('19:00');
  });
});

describe('runs per day', () => {
  it("counts the runs of each of the last 30 dates of the zone, today last, a run's date being the zone's", () => {
    const runs = [
      run('2026-06-20T01:00:00.000Z', 'ok'), // 2026-06-19 in New York
      run('2026-06-20T05:00:00.000Z', 'skipped'), // 2026-06-20 there
      run('2026-05-22T12:00:00.000Z', 'ok'), // the first of the 30 days
      run('2026-05-21T12:00:00.000Z', 'ok'), // outside
    ];
    const histogram = runsPerDay(runs, NOW, 30, 'America/New_York');
    expect(histogram.labels).toHaveLength(30);
    expect(histogram.labels[29]).toBe('2026-06-20');
    expect(histogram.labels[0]).toBe('2026-05-22');
    expect(new Date(histogram.starts[29]!).toISOString()).toBe('2026-06-20T04:00:00.000Z');
    expect(histogram.counts.ok[28]).toBe(1);
    expect(histogram.counts.skipped[29]).toBe(1);
    expect(histogram.counts.ok[0]).toBe(1);
    expect(histogram.counts.ok.reduce((sum, count) => sum + count, 0)).toBe(2);
  });

  it('has 30 distinct dates across a change of the clocks', () => {
    const days = lastDays(new Date('2026-11-10T12:00:00.000Z'), 30, 'Europe/Berlin');
    expect(new Set(days.map((day) => day.key)).size).toBe(30);
    expect(days.find((day) => day.key === '2026-10-25')!.start).toBe(Date.parse('2026-10-24T22:00:00.000Z'));
    expect(days.find((day) => day.key === '2026-10-26')!.start).toBe(Date.parse('2026-10-25T23:00:00.000Z'));
    expect(dayKey(new Date('2026-10-25T22:30:00.000Z'), 'Europe/Berlin')).toBe('2026-10-25');
  });
});

describe('cost per day per model', () => {
  it('sums the cost of each day per model, the most expensive model first, and leaves out runs without a cost', () => {
    const runs = [
      run('2026-06-20T08:00:00.000Z', 'ok', { model: 'anthropic/claude-sonnet', cost_usd: 0.25 }),
      run('2026-06-20T09:00:00.000Z', 'ok', { model: 'anthropic/claude-sonnet', cost_usd: 0.125 }),
      run('2026-06-19T09:00:00.000Z', 'ok', { model: 'openai/gpt-5-mini', cost_usd: 0.01 }),
      run('2026-06-19T09:00:00.000Z', 'ok', { model: 'openai/gpt-5-mini', cost_usd: null }),
      run('2026-06-18T09:00:00.000Z', 'error', { model: null, cost_usd: 0.001 }),
      run('2026-04-01T09:00:00.000Z', 'ok', { model: 'openai/gpt-5-mini', cost_usd: 9 }),
    ];
    const cost = costPerDayPerModel(runs, NOW, 30, 'UTC');
    expect(cost.days).toHaveLength(30);
    expect(cost.models.map((model) => [model.model, model.total])).toEqual([
      ['anthropic/claude-sonnet', 0.375],
      ['openai/gpt-5-mini', 0.01],
      ['unknown model', 0.001],
    ]);
    expect(cost.models[0]!.costs[29]).toBe(0.375);
    expect(cost.models[1]!.costs[28]).toBe(0.01);
  });

  it('has no model when no run had a cost', () => {
    expect(costPerDayPerModel([run('2026-06-20T08:00:00.000Z', 'ok')], NOW, 30, 'UTC').models).toEqual([]);
  });
});

describe('durations', () => {
  it('is the nearest-rank percentile', () => {
    expect(percentile([], 0.5)).toBeNull();
    expect(percentile([5], 0.95)).toBe(5);
    expect(percentile([4, 1, 3, 2], 0.5)).toBe(2);
    expect(percentile([...Array.from({ length: 100 }, (_unused, index) => index + 1)], 0.95)).toBe(95);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100], 0.95)).toBe(19);
  });

  it("gives each job's median and p95 of its finished runs, by its newest name, slowest first, leaving out running and skipped ones", () => {
    const took = (start: string, ms: number, extra: Partial<RunRecord> = {}) =>
      run(start, 'ok', { finished_at: new Date(Date.parse(start) + ms).toISOString(), ...extra });
    const runs = [
      took('2026-06-20T08:00:00.000Z', 1000),
      took('2026-06-20T09:00:00.000Z', 3000, { name: 'Morning digest' }),
      took('2026-06-20T07:00:00.000Z', 2000),
      run('2026-06-20T10:00:00.000Z', 'running'),
      run('2026-06-20T10:00:00.000Z', 'skipped', { finished_at: '2026-06-20T10:00:00.000Z' }),
      took('2026-06-20T08:00:00.000Z', 60_000, { kind: 'webhook', subject: 'github', name: 'github' }),
    ];
    expect(durationsPerSubject(runs)).toEqual([
      { kind: 'webhook', subject: 'github', name: 'github', runs: 1, p50_ms: 60_000, p95_ms: 60_000 },
      { kind: 'cron', subject: 'job1', name: 'Morning digest', runs: 3, p50_ms: 2000, p95_ms: 3000 },
    ]);
  });

  it('says a duration in words', () => {
    expect(durationInWords(850)).toBe('850 ms');
    expect(durationInWords(1250)).toBe('1.3 s');
    expect(durationInWords(185_000)).toBe('3 min 5 s');
    expect(durationInWords(120_000)).toBe('2 min');
  });
});

describe('counts', () => {
  it('counts each value, zero for those none has, and ignores values not asked for', () => {
    expect(countBy(['a', 'b', 'a', 'z', null], ['a', 'b', 'c'] as const, (each) => each as 'a' | 'b' | 'c' | null)).toEqual({
      a: 2,
      b: 1,
      c: 0,
    });
  });
});

describe('events per hour', () => {
  it('counts the times of each of the last hours, the current one last', () => {
    expect(
      countPerHour(
        ['2026-06-20T10:01:00.000Z', '2026-06-20T10:02:00.000Z', '2026-06-20T08:59:00.000Z', '2026-06-19T10:00:00.000Z'],
        NOW,
        3,
      ),
    ).toEqual([1, 0, 2]);
  });
});
