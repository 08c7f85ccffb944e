import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ERROR_CODES, type ErrorArea } from '../../src/domain/errorCodes.js';

/**
 * The catalogue in src/domain/errorCodes.ts is the whole list of codes: a code spelled out in
 * src must be in it, and every code in it must be thrown somewhere, through the catalogue.
 */
const SRC = resolve('src');
const CATALOGUE_FILE = join(SRC, 'domain', 'errorCodes.ts');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const sources = sourceFiles(SRC)
  .filter((file) => file !== CATALOGUE_FILE)
  .map((file) => ({ file: relative(SRC, file), text: readFileSync(file, 'utf8') }));

const catalogue: string[] = Object.values(ERROR_CODES).flatMap((area) => Object.values(area));

/** A code written out as a string, in code or in a comment: `'JOB.NOT_FOUND'`. */
const SPELLED_OUT = /['"`]([A-Z][A-Z0-9_]*\.[A-Z][A-Z0-9_]*)['"`]/g;
/** A code taken from the catalogue: `ERROR_CODES.JOB.NOT_FOUND`. */
const FROM_CATALOGUE = /\bERROR_CODES\.([A-Z][A-Z0-9_]*)\.([A-Z][A-Z0-9_]*)\b/g;
/** A code built from a reason at run time: `` `AGENT.${reason.toUpperCase()}` ``. */
const BUILT = /`([A-Z][A-Z0-9_]*\.[A-Z0-9_]*)\$\{/g;

function found(pattern: RegExp): { file: string; code: string }[] {
  return sources.flatMap(({ file, text }) => [...text.matchAll(pattern)].map((match) => ({ file, code: match.slice(1).join('.') })));
}

describe('the error code catalogue', () => {
  it('spells each code as its area and its name', () => {
    const misspelled = (Object.keys(ERROR_CODES) as ErrorArea[]).flatMap((area) =>
      Object.entries(ERROR_CODES[area])
        .filter(([name, code]) => code !== `${area}.${name}`)
        .map(([name, code]) => `${area}.${name} is "${code}"`),
    );
    expect(misspelled).toEqual([]);
  });

  it('holds every code that src spells out', () => {
    const unknown = found(SPELLED_OUT)
      .filter(({ code }) => !catalogue.includes(code))
      .map(({ file, code }) => `${file}: ${code}`);
    expect(unknown).toEqual([]);
  });

  it('holds every code that src builds at run time', () => {
    const unknown = found(BUILT)
      .filter(({ code: prefix }) => !catalogue.some((code) => code.startsWith(prefix)))
      .map(({ file, code }) => `${file}: ${code}…`);
    expect(unknown).toEqual([]);
  });

  it('holds only codes that src throws', () => {
    const used = new Set(found(FROM_CATALOGUE).map(({ code }) => code));
    const prefixes = found(BUILT).map(({ code }) => code);
    const unused = catalogue.filter((code) => !used.has(code) && !prefixes.some((prefix) => code.startsWith(prefix)));
    expect(unused).toEqual([]);
  });

  it('tells a code that is in it from one that is not', () => {
    const text = "throw new JobError(ERROR_CODES.JOB.NOT_FOUND, 'x'); throw new AppError('JOB.NO_SUCH_CODE', 'y');";
    expect([...text.matchAll(FROM_CATALOGUE)].map((match) => match.slice(1).join('.'))).toEqual(['JOB.NOT_FOUND']);
    expect([...text.matchAll(SPELLED_OUT)].map((match) => match[1]).filter((code) => !catalogue.includes(code!))).toEqual([
      'JOB.NO_SUCH_CODE',
    ]);
  });
});
