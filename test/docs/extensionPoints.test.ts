import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The sections of docs/architecture.md that name the files to touch for each extension point. */
const SECTIONS = ['## How to add a chat platform', '## How to add a schedule form', '## How to add a store'];

/** Where a path named in those sections may lie. */
const CHECKED = /^(src|test|docs|bench)\//;

/** The text of `heading`'s section in docs/architecture.md, up to the next `## ` heading. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/architecture.md has no section "${heading}"`);
  const next = markdown.indexOf('\n## ', start + heading.length + 1);
  return markdown.slice(start, next < 0 ? undefined : next);
}

/** Every backticked repository path in `text` (`src/…`, `test/…`, `docs/…`, `bench/…`). */
function pathsIn(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!.trim());
  return [...new Set(spans.filter((span) => CHECKED.test(span) && !/\s/.test(span)))];
}

/** Every backticked name in capitals in `text` (`SCHEDULE_FORMS`, `PLATFORM_SPECS`): a table or a constant of the code. */
function namesIn(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
  return [...new Set(spans.filter((span) => /^[A-Z][A-Z0-9_]+$/.test(span)))];
}

/**
 * Whether `path` names something in the repository. A `<Name>` in it stands for the new file of
 * the extension (`src/adapters/delivery/<Name>Sender.ts`), and must then match at least one file
 * already there, so that the pattern follows the names in use.
 */
function exists(path: string): boolean {
  if (!path.includes('<')) return existsSync(join(REPO, path));
  const directory = join(REPO, dirname(path));
  if (dirname(path).includes('<') || !existsSync(directory) || !statSync(directory).isDirectory()) return false;
  const pattern = new RegExp(
    `^${basename(path)
      .split(/<[^>]+>/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]+')}$`,
  );
  return readdirSync(directory).some((entry) => pattern.test(entry));
}

describe('the extension points of docs/architecture.md', () => {
  const markdown = readFileSync(join(REPO, 'docs', 'architecture.md'), 'utf8');

  it.each(SECTIONS)('"%s" names the files to touch, each of which exists', (heading) => {
    const paths = pathsIn(section(markdown, heading));

    expect(paths.length).toBeGreaterThanOrEqual(10);
    expect(paths.filter((path) => !exists(path))).toEqual([]);
  });

  it.each(SECTIONS)('"%s" names only tables and constants that a file it names holds', (heading) => {
    const text = section(markdown, heading);
    const files = pathsIn(text)
      .filter((path) => !path.includes('<') && existsSync(join(REPO, path)) && statSync(join(REPO, path)).isFile())
      .map((path) => readFileSync(join(REPO, path), 'utf8'));
    const names = namesIn(text);

    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !files.some((file) => new RegExp(`\\b${name}\\b`).test(file)))).toEqual([]);
  });

  it('names a contract or an end-to-end test in each section', () => {
    for (const heading of SECTIONS) {
      expect(pathsIn(section(markdown, heading)).some((path) => /^test\/(contract|e2e)\//.test(path))).toBe(true);
    }
  });

  it('reads a <Name> pattern as the files beside it, and a missing file as missing', () => {
    expect(exists('src/adapters/delivery/<Name>Sender.ts')).toBe(true);
    expect(exists('src/adapters/delivery/<Name>Nowhere.ts')).toBe(false);
    expect(exists('src/adapters/delivery/NoSuchSender.ts')).toBe(false);
    expect(pathsIn('see `src/domain/Schedule.ts`, `agent send`, `src/a b`')).toEqual(['src/domain/Schedule.ts']);
    expect(namesIn('`SCHEDULE_FORMS`, `SCHEDULE.INVALID`, `parseSchedule`, `<NAME>_`')).toEqual(['SCHEDULE_FORMS']);
  });
});
