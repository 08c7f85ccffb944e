import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { environmentAsGiven, runOnTimeZone } from '../../../src/adapters/system/hostTimeZone.js';
import { assertTimeZone, formatWallClock, isListedTimeZone, localTimeIs } from '../../../src/domain/zonedTime.js';
import { bundleScript } from '../../support/bundleScript.js';

const givenTz = process.env.TZ;
const directory = mkdtempSync(join(tmpdir(), 'host-clock-'));

afterEach(() => {
  localTimeIs(null);
  if (givenTz === undefined) delete process.env.TZ;
  else process.env.TZ = givenTz;
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('a process run on the jobs’ zone', () => {
  it('reads the wall clock the formatter gives from Date, in every zone the runtime lists, DST gaps and repeats included', async () => {
    const script = await bundleScript(fileURLToPath(new URL('../../support/hostClockSweepChild.ts', import.meta.url)), directory);
    const child = spawnSync(process.execPath, [script], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    expect(child.stderr).toBe('');
    const result = JSON.parse(child.stdout) as { zones: number; onDate: number; mismatches: string[]; berlin: string; newYork: string };
    expect(result.mismatches).toEqual([]);
    // Every zone was read from Date, not only some.
    expect(result.onDate).toBe(result.zones);
    expect([result.berlin, result.newYork]).toEqual(['2026-07-01 12:00', '2026-07-01 06:00']);
  });

  it('keeps the formatter where setting TZ moves no clock (a test runner’s copy of the environment)', () => {
    runOnTimeZone('Asia/Tokyo');
    expect(formatWallClock(new Date('2026-07-01T10:00:00Z'), 'Asia/Tokyo')).toBe('2026-07-01 19:00');
    expect(process.env.TZ).toBe(givenTz);
  });

  it('does not take a zone the runtime does not list by that name, and still accepts it as an alias', () => {
    runOnTimeZone('US/Eastern');
    expect(process.env.TZ).toBe(givenTz);
    expect(isListedTimeZone('US/Eastern')).toBe(false);
    expect(assertTimeZone('US/Eastern')).toBe('US/Eastern');
    expect(() => assertTimeZone('Mars/Base')).toThrow('"Mars/Base" is not a valid time zone');
  });

  it('gives what the process starts the TZ the process was given', () => {
    expect(environmentAsGiven({ TZ: 'Europe/Paris', HOME: '/home/a' })).toEqual({ TZ: 'Europe/Paris', HOME: '/home/a' });
  });
});
