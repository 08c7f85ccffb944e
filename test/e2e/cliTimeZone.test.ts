import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createJob, inAScratchHomeEachTest, makeDue, runAgent, writeHomeFile } from './agentCli.js';

/**
 * The command line runs on the configured zone (its wall clocks read from Date, docs/adr/0003):
 * what it shows is that zone's time, and what it starts still gets the TZ it was given.
 */
describe('agent cron on the configured zone', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh), { timezone: 'Asia/Tokyo' });

  it('shows next runs in the configured zone, whatever TZ the command was started with', async () => {
    const id = await createJob(home, ['30 9 * * *', 'Morning summary', '--deliver', 'local']);

    for (const tz of [undefined, 'America/Chicago', 'UTC']) {
      const run = await runAgent(['cron', 'list', '--no-tick'], { home, env: { TZ: tz } });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('NEXT RUN (Asia/Tokyo)');
      expect(run.stdout).toMatch(new RegExp(`${id} .* \\d{4}-\\d\\d-\\d\\d 09:30 `));
    }
  });

  it('gives a pre-run script the TZ the command was given, not the zone it runs on', async () => {
    await writeHomeFile(
      home,
      'scripts/zone.mjs',
      'import { appendFileSync } from "node:fs";\nappendFileSync(new URL("../seen.txt", import.meta.url), `${process.env.TZ ?? "unset"}\\n`);\n',
    );
    const id = await createJob(home, ['every 1h', 'Report', '--deliver', 'local', '--script', 'zone.mjs']);

    for (const tz of [undefined, 'America/Chicago']) {
      await makeDue(home, id);
      const run = await runAgent(['cron', 'tick'], { home, env: { TZ: tz } });
      expect(run).toMatchObject({ code: 0, stderr: '' });
    }

    expect(readFileSync(join(home, 'seen.txt'), 'utf8')).toBe('unset\nAmerica/Chicago\n');
  });
});
