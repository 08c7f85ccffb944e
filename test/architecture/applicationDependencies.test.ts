import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The use cases stay small enough to read as the story of their steps (docs/architecture.md):
 * every class in src/application injects at most six things, so that a facade that needs more is
 * split into collaborators with a responsibility and a test of their own; and the run use cases
 * (a job's, a webhook event's, a chat's, a redelivery) stay under 300 lines. The constructors are
 * read with the TypeScript compiler's parser, so that decorators, defaults and comments between
 * the parameters count as what they are.
 */
const APPLICATION = resolve('src/application');
const MAX_DEPENDENCIES = 6;
const MAX_RUN_USE_CASE_LINES = 300;
/** Where the run use cases live, and how their files are named. */
const RUN_USE_CASE_AREAS = ['cron', 'webhook', 'chat', 'runs'];
const isRunUseCase = (file: string) =>
  file.endsWith('Execution.ts') || file.startsWith('Redeliver') || file === 'ConverseInChats.ts' || file === 'AskAgent.ts';

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

interface Injecting {
  file: string;
  name: string;
  parameters: number;
}

/** Every named class in `file` with how many parameters its constructor takes (0 without one). */
function classesIn(file: string): Injecting[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Injecting[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isClassDeclaration(node) && node.name) {
      const constructors = node.members.filter(ts.isConstructorDeclaration);
      const parameters = Math.max(0, ...constructors.map((constructor) => constructor.parameters.length));
      found.push({ file: relative(APPLICATION, file).split(/[\\/]/).join('/'), name: node.name.text, parameters });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

describe('the application layer', () => {
  const classes = sourceFiles(APPLICATION).flatMap(classesIn);

  it(`injects at most ${MAX_DEPENDENCIES} dependencies into any class`, () => {
    const tooMany = classes
      .filter((each) => each.parameters > MAX_DEPENDENCIES)
      .map((each) => `${each.file}: ${each.name} injects ${each.parameters}`);

    // The parse found the use cases, not nothing.
    expect(classes.map((each) => each.name)).toEqual(expect.arrayContaining(['RunDueJobs', 'AcceptWebhook', 'JobControlService']));
    expect(tooMany).toEqual([]);
  });

  it(`keeps each run use case under ${MAX_RUN_USE_CASE_LINES} lines`, () => {
    const runUseCases = RUN_USE_CASE_AREAS.flatMap((area) =>
      readdirSync(join(APPLICATION, area))
        .filter(isRunUseCase)
        .map((file) => join(APPLICATION, area, file)),
    );
    const tooLong = runUseCases
      .map((file) => ({ file: relative(APPLICATION, file).split(/[\\/]/).join('/'), lines: lineCount(readFileSync(file, 'utf8')) }))
      .filter((each) => each.lines >= MAX_RUN_USE_CASE_LINES)
      .map((each) => `${each.file} has ${each.lines} lines`);

    expect(runUseCases.map((file) => basename(file))).toEqual(expect.arrayContaining(['AskAgent.ts', 'RedeliverJobRun.ts']));
    expect(tooLong).toEqual([]);
  });
});
