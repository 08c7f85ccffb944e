// A jobs.json of `count` jobs, none due within the next hour, for the benches.
const SCHEDULES = [
  { kind: 'interval', expr: 'every 1d', display: 'every 1d', minutes: 1440 },
  { kind: 'cron', expr: '0 9 * * 1-5', display: '0 9 * * 1-5' },
  { kind: 'cron', expr: '*/15 * * * *', display: '*/15 * * * *' },
];

export function jobStoreText(count, now = Date.now()) {
  const jobs = Array.from({ length: count }, (_, i) => ({
    id: i.toString(16).padStart(12, '0'),
    name: `job ${i}`,
    prompt: `Prompt number ${i}: summarise the state of project ${i} and report anything unusual.`,
    schedule: SCHEDULES[i % SCHEDULES.length],
    skills: i % 2 ? ['triage'] : [],
    deliver: 'local',
    repeat: { times: null, completed: i % 7 },
    state: i % 10 === 0 ? 'paused' : 'scheduled',
    enabled: i % 10 !== 0,
    next_run_at: new Date(now + 3_600_000 + i * 1000).toISOString(),
    last_run_at: null,
    last_status: i % 3 ? 'ok' : null,
    last_error: null,
    last_delivery_error: null,
    last_delivery_queued: null,
    created_at: new Date(now).toISOString(),
    model: null,
    provider: null,
    script: null,
    origin: null,
    paused_at: null,
    claim: null,
  }));
  return JSON.stringify({ jobs, updated_at: new Date(now).toISOString() }, null, 2);
}
