import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bubblewrapWorks } from '../support/bubblewrapWorks.js';
import { FakeLlmServer, replies, type RecordedRequest } from '../support/fakeLlmServer.js';
import { freePort } from '../support/freePort.js';
import { localModelLines } from './configLines.js';
import {
  createJob,
  errorSentence,
  makeAgentHome,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  storedJob,
  writeHomeFile,
} from './agentCli.js';

/**
 * A job's own toolsets, working folder and carried answers as users meet them, through
 * dist/agent.js and a model on a local server speaking the OpenAI wire format: what the model
 * is sent is what these tests read.
 */

const LLM_KEY = { TEST_LLM_KEY: 'canary-llm-key' };

const bwrapWorks = await bubblewrapWorks();
// Skipped only where bubblewrap cannot make its sandbox (not installed, no user namespaces); the other cases run without it.
const whereBwrapWorks = bwrapWorks ? it : it.skip;

/** The text of each user message of a request, in order. */
function userTexts(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .filter((message: { role: string }) => message.role === 'user')
    .map((message: { content: unknown }) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content)));
}

/** The names of the tools a request offers the model. */
function offeredTools(request: RecordedRequest | undefined): string[] {
  return (request?.body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name).sort();
}

/** What the terminal tool gave back to the model, from the request after its call. */
function terminalResult(request: RecordedRequest | undefined): { stdout: string; exit_code: number | null } {
  const result = (request?.body.messages ?? []).find((message: { role: string }) => message.role === 'tool');
  return JSON.parse(result.content);
}

describe("a job's toolsets, working folder and carried answers, through the built executable", () => {
  let home: string;
  let folder: string;
  let llm: FakeLlmServer;

  beforeAll(() => requireBuiltAgent());

  const configure = (sandbox = false) =>
    writeHomeFile(
      home,
      'config.yaml',
      ['timezone: UTC', ...localModelLines(llm, 'openai', { sandbox }), 'search:', '  searxng_url: http://127.0.0.1:9', ''].join('\n'),
    );

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    home = await makeAgentHome();
    folder = await mkdtemp(join(tmpdir(), 'agent-workdir-'));
    await configure();
  });

  let gateway: ChildProcess | null = null;

  afterEach(async () => {
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    }
    gateway = null;
    await llm.close();
    await removeAgentHome(home);
    await rm(folder, { recursive: true, force: true });
  });

  const run = (job: string) => runAgent(['cron', 'run', job, '--no-tick'], { home, env: LLM_KEY });

  it("--workdir: the model is given the folder's AGENTS.md after the skills, and the terminal runs there", async () => {
    await writeFile(join(folder, 'AGENTS.md'), 'Deploy only on Tuesdays; run make check first.\n');
    await writeHomeFile(home, 'skills/triage/SKILL.md', 'Sort findings by severity.\n');
    await createJob(home, ['every 1h', 'Check the site', '--name', 'site', '--deliver', 'local', '--skill', 'triage', '--workdir', folder]);
    llm.reply(replies.toolCalls({ name: 'terminal', arguments: { command: 'pwd && echo made > made.txt' } }), replies.text('Done.'));

    expect(await run('site')).toMatchObject({ code: 0 });

    const texts = userTexts(llm.requests[0]);
    const skill = texts.findIndex((text) => text.includes('Sort findings by severity.'));
    const instructions = texts.findIndex((text) => text.includes('Deploy only on Tuesdays; run make check first.'));
    const task = texts.findIndex((text) => text.includes('Check the site'));
    expect([skill >= 0, skill < instructions, instructions < task]).toEqual([true, true, true]);
    expect(texts[instructions]).toContain(`AGENTS.md of the working folder ${folder}`);
    expect(terminalResult(llm.requests[1]).stdout.trim()).toBe(folder);
    expect(await readFile(join(folder, 'made.txt'), 'utf8')).toBe('made\n');
  });

  whereBwrapWorks('--workdir is bound writable into the sandbox, where the workspace is not the terminal’s folder', async () => {
    await configure(true);
    await createJob(home, ['every 1h', 'Build it', '--name', 'build', '--deliver', 'local', '--workdir', folder]);
    llm.reply(replies.toolCalls({ name: 'terminal', arguments: { command: 'pwd && echo built > out.txt' } }), replies.text('Built.'));

    expect(await run('build')).toMatchObject({ code: 0 });

    expect(terminalResult(llm.requests[1])).toMatchObject({ exit_code: 0, stdout: `${folder}\n` });
    expect(await readFile(join(folder, 'out.txt'), 'utf8')).toBe('built\n');
  });

  it('--workdir runs the pre-run script there too', async () => {
    await writeHomeFile(home, 'scripts/where.sh', 'pwd\n');
    await createJob(home, ['every 1h', 'Report', '--name', 'where', '--deliver', 'local', '--script', 'where.sh', '--workdir', folder]);
    llm.reply(replies.text('Noted.'));

    expect(await run('where')).toMatchObject({ code: 0 });

    expect(userTexts(llm.requests[0]).at(-1)).toContain(`## Script Output\n\n${folder}`);
  });

  it('--toolset web: the model is offered only the web tools, never cronjob; a job without it the preset', async () => {
    await createJob(home, [
      'every 1h',
      'Look it up',
      '--name',
      'web-only',
      '--deliver',
      'local',
      '--toolset',
      'web',
      '--toolset',
      'cronjob',
    ]);
    await createJob(home, ['every 1h', 'Look around', '--name', 'preset', '--deliver', 'local']);
    llm.reply(replies.text('Found.'), replies.text('Seen.'));

    expect(await run('web-only')).toMatchObject({ code: 0 });
    expect(await run('preset')).toMatchObject({ code: 0 });

    expect(offeredTools(llm.requests[0])).toEqual(['web_extract', 'web_search']);
    expect(offeredTools(llm.requests[1])).toEqual(['clarify', 'terminal', 'vision', 'web_extract', 'web_search']);
  });

  it('refuses an unknown toolset and a missing working folder in one sentence, and saves nothing', async () => {
    const unknown = await runAgent(['cron', 'create', 'every 1h', 'x', '--toolset', 'shell', '--no-tick'], { home });
    expect(unknown.code).toBe(1);
    expect(errorSentence(unknown)).toMatch(/^error: The job names an unknown toolset "shell"; the known ones are cronjob, terminal, web/);
    const missing = await runAgent(['cron', 'create', 'every 1h', 'x', '--workdir', join(folder, 'gone'), '--no-tick'], { home });
    expect(missing.code).toBe(1);
    expect(errorSentence(missing)).toBe(
      `error: The working folder ${join(folder, 'gone')} does not exist; create it first, or name an existing folder.`,
    );
    expect(
      existsSync(join(home, 'cron', 'jobs.json')) ? JSON.parse(await readFile(join(home, 'cron', 'jobs.json'), 'utf8')).jobs : [],
    ).toEqual([]);
  });

  it('--context-from carries the other job’s last ok answer with its time; --continue the job’s own', async () => {
    const digest = await createJob(home, ['every 1h', 'Digest the issues', '--name', 'digest', '--deliver', 'local']);
    const report = await createJob(home, [
      'every 1h',
      'Write the report',
      '--name',
      'report',
      '--deliver',
      'local',
      '--context-from',
      'digest',
      '--continue',
    ]);
    expect(storedJob(home, report)).toMatchObject({ context_from: [digest], continue: true });
    llm.reply(replies.text('Digest: three new issues.'), replies.text('Report one.'), replies.text('Report two.'));

    expect(await run('digest')).toMatchObject({ code: 0 });
    expect(await run('report')).toMatchObject({ code: 0 });
    expect(await run('report')).toMatchObject({ code: 0 });

    const first = userTexts(llm.requests[1]).join('\n');
    expect(first).toContain(`# Earlier answer of job 'digest' (${digest})`);
    expect(first).toContain('Digest: three new issues.');
    expect(first).toMatch(/given at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z by a run that ended ok/);
    expect(first).toContain('There is no ok answer of this job to carry forward yet.');
    const second = userTexts(llm.requests[2]).join('\n');
    expect(second).toContain('# Earlier answer of this job');
    expect(second).toContain('Report one.');
  });

  it('cron show and its --json name the toolsets, the working folder and what is carried forward', async () => {
    const digest = await createJob(home, ['every 1h', 'Digest', '--name', 'digest', '--deliver', 'local']);
    await createJob(home, [
      'every 1h',
      'Report',
      '--name',
      'report',
      '--deliver',
      'local',
      '--toolset',
      'web',
      '--workdir',
      folder,
      '--context-from',
      digest,
      '--continue',
    ]);

    const shown = await runAgent(['cron', 'show', 'report', '--no-tick'], { home });
    expect(shown.stdout).toMatch(/Toolsets: +web\n/);
    expect(shown.stdout).toMatch(new RegExp(`Working folder: +${folder} \\(its AGENTS.md`));
    expect(shown.stdout).toContain(`the last ok answer of 'digest' (${digest}); its own last ok answer, each cut to 8 KB`);
    const json = JSON.parse((await runAgent(['cron', 'show', 'report', '--json', '--no-tick'], { home })).stdout);
    expect(json).toMatchObject({ toolsets: ['web'], workdir: folder, context_from: [digest], continue: true });

    const edited = await runAgent(
      ['cron', 'edit', 'report', '--clear-toolsets', '--no-workdir', '--no-context-from', '--no-continue', '--json', '--no-tick'],
      {
        home,
      },
    );
    expect(JSON.parse(edited.stdout)).toMatchObject({ toolsets: null, workdir: null, context_from: [], continue: false });
  });

  it("the dashboard's job form of the built gateway saves them, and its edit form gives them back", async () => {
    const token = 'e2e-dashboard-token-of-128-bits';
    const port = await freePort();
    const digest = await createJob(home, ['every 1h', 'Digest', '--name', 'digest', '--deliver', 'local']);
    await writeHomeFile(
      home,
      'config.yaml',
      ['timezone: UTC', ...localModelLines(llm, 'openai'), 'dashboard:', '  enabled: true', `  port: ${port}`, ''].join('\n'),
    );
    const started = await startGatewayUntil(home, 'dashboard listening on', { env: { AGENT_DASHBOARD_TOKEN: token }, withinMs: 15_000 });
    gateway = started.gateway;
    const base = `http://127.0.0.1:${port}`;
    const signedIn = await fetch(`${base}/sign-in`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual' });
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(`${base}/jobs/new`, { headers: { cookie } })).text())![1]!;

    const created = await fetch(`${base}/jobs`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({
        csrf,
        schedule: 'every 1h',
        prompt: 'Report',
        name: 'report',
        toolsets: 'web, clarify',
        workdir: folder,
        context_from: 'digest',
        continue: 'yes',
      }),
      redirect: 'manual',
    });
    expect(created.status).toBe(303);
    const shown = JSON.parse((await runAgent(['cron', 'show', 'report', '--json', '--no-tick'], { home })).stdout);
    expect(shown).toMatchObject({ toolsets: ['web', 'clarify'], workdir: folder, context_from: [digest], continue: true });

    const form = await (await fetch(`${base}/jobs/${shown.id}/edit`, { headers: { cookie } })).text();
    expect(form).toContain('<input name="toolsets" type="text" value="web, clarify"');
    expect(form).toContain(`<input name="workdir" type="text" value="${folder}"`);
    expect(form).toContain('<input name="context_from" type="text" value="digest"');
    expect(form).toContain('<input name="continue" type="checkbox" value="yes" checked>');
  });
});
