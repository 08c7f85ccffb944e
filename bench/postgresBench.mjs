// What the benches that compare the file store with PostgreSQL share: a scratch database on the
// server of BENCH_POSTGRES_URL (default the local one), its schema migrated by the built agent,
// filled with jobs in bulk. Null, with one line said, when the server does not answer.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { AGENT } from './gatewayBench.mjs';

const SERVER = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
let unreachableSaid = false;

async function admin(statement) {
  const client = new pg.Client({ connectionString: `${SERVER}/postgres`, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A database holding `jobs` (records as jobs.json holds them); `drop` removes it. */
export async function scratchJobDatabase(jobs) {
  const name = `agent_bench_${randomBytes(4).toString('hex')}`;
  try {
    await admin(`CREATE DATABASE ${name}`);
  } catch (error) {
    if (!unreachableSaid) console.log(`  (PostgreSQL at ${SERVER} does not answer: ${error.message}; no PostgreSQL figures)`);
    unreachableSaid = true;
    return null;
  }
  const url = `${SERVER}/${name}`;
  const drop = () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  const migrated = spawnSync(process.execPath, [AGENT, 'db', 'migrate'], {
    env: { ...process.env, AGENT_DATABASE_URL: url },
    encoding: 'utf8',
  });
  if (migrated.status !== 0) {
    await drop();
    throw new Error(`agent db migrate failed: ${migrated.stderr}`);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let start = 0; start < jobs.length; start += 5000) {
      const batch = jobs.slice(start, start + 5000);
      await client.query(
        `INSERT INTO agent_jobs (id, name_key, state, enabled, next_run_at, record)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::timestamptz[], $6::jsonb[])`,
        [
          batch.map((job) => job.id),
          batch.map((job) => job.name.toLowerCase()),
          batch.map((job) => job.state),
          batch.map((job) => job.enabled),
          batch.map((job) => job.next_run_at),
          batch.map((job) => JSON.stringify(job)),
        ],
      );
    }
    await client.query('ANALYZE agent_jobs');
  } finally {
    await client.end();
  }
  return { url, drop };
}
