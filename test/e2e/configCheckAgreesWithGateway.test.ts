import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../support/freePort.js';
import {
  errorSentence,
  inAScratchHomeEachTest,
  outcomeOf,
  runAgent,
  startAgent,
  startGatewayUntil,
  writeHomeFile,
  type AgentRun,
} from './agentCli.js';
import { commandModelLines } from './configLines.js';

/**
 * `agent config check` runs the checks `agent gateway` runs at start-up: a config the gateway
 * refuses fails the check with the same sentence, one a line; one that passes starts the gateway.
 * Each broken config below breaks one start-up check.
 */
describe('agent config check agrees with agent gateway, end to end', () => {
  let home: string;
  inAScratchHomeEachTest((made) => (home = made));

  /** config.yaml: the stand-in model, then `lines`; `{port}` is replaced by a free port. */
  async function writeConfig(lines: string[]): Promise<void> {
    const port = String(await freePort());
    const body = [...commandModelLines([process.execPath, join(home, 'model.mjs')]), ...lines].join('\n').replaceAll('{port}', port);
    await writeHomeFile(home, 'config.yaml', `${body}\n`);
  }

  /** The listener on 127.0.0.1 with a shared secret, the lines of `routes:` following (8 spaces). */
  const listener = (...routes: string[]) => [
    'platforms:',
    '  webhook:',
    '    enabled: true',
    '    extra:',
    '      host: 127.0.0.1',
    '      port: {port}',
    ...(routes.length > 0 ? ['      routes:', ...routes] : []),
  ];

  /** The gateway run to its end; killed (and the test failed) if it is still running after 15 s. */
  async function gatewayRefusal(env: Record<string, string> = {}): Promise<AgentRun> {
    const child = startAgent(['gateway'], { home, env });
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    try {
      return await outcomeOf(child);
    } finally {
      clearTimeout(timer);
    }
  }

  const corpus: Array<[check: string, lines: string[], env: Record<string, string>, sentence: RegExp]> = [
    [
      'a wrong value',
      ['cron:', '  max_parallel_jobs: four'],
      {},
      /config\.yaml: cron\.max_parallel_jobs must be a whole number of 1 or more \(got "four"\)\.$/,
    ],
    ['a time zone that does not exist', ['timezone: Mars/Olympus'], {}, /Mars\/Olympus/],
    [
      'a route delivering to a target instead of a platform',
      listener('        ops: {secret: s1, deliver: "telegram:#ops"}'),
      {},
      /routes\.ops\.deliver must be one of log, repo_comment, telegram, .* \(got "telegram:#ops"\)\.$/,
    ],
    [
      'a route without a secret',
      listener('        ops: {events: [push]}'),
      {},
      /routes\.ops has no secret and platforms\.webhook\.extra\.secret is not set either; give the route a secret \(or a list of them\)\.$/,
    ],
    [
      'repo_comment without deliver_extra',
      listener('        ops: {secret: s1, deliver: repo_comment}'),
      {},
      /routes\.ops\.deliver_extra\.repo must be set for deliver: repo_comment/,
    ],
    [
      'a filter written with equals',
      listener('        ops: {secret: s1, filters: [{field: action, equals: opened}]}'),
      {},
      /routes\.ops\.filters\[0\] must be \{field: "<dotted\.path>", in: \[<allowed values>\]\}; no other operator exists\.$/,
    ],
    [
      'INSECURE_NO_AUTH on a listener others can reach',
      [
        'platforms:',
        '  webhook:',
        '    enabled: true',
        '    extra:',
        '      host: 0.0.0.0',
        '      port: {port}',
        '      routes:',
        '        dev: {secret: INSECURE_NO_AUTH}',
      ],
      {},
      /routes\.dev\.secret is INSECURE_NO_AUTH, which is refused unless the listener is bound to a loopback address/,
    ],
    [
      'metrics anyone could read',
      ['platforms:', '  webhook:', '    enabled: true', '    extra:', '      host: 0.0.0.0', '      port: {port}', '      metrics: true'],
      {},
      /platforms\.webhook\.extra\.metrics is true without platforms\.webhook\.extra\.metrics_token/,
    ],
    [
      'a platform base URL in the environment that is no http(s) URL',
      [],
      { TELEGRAM_BASE_URL: 'htp:/api.telegram.org' },
      /^TELEGRAM_BASE_URL \(which wins over platforms\.telegram\.base_url\) must be an http:\/\/ or https:\/\/ URL \(got "htp:\/api\.telegram\.org"\); correct it\.$/,
    ],
    [
      'a platform address in config.yaml that is no http(s) URL',
      ['platforms:', '  mattermost:', '    url: chat.example.com', '    token: t0k3n'],
      {},
      /config\.yaml: platforms\.mattermost\.url must be an http:\/\/ or https:\/\/ URL \(got "chat\.example\.com"\); correct it\.$/,
    ],
  ];

  it.each(corpus)('%s: the check fails and the gateway refuses to start, with the same sentence', async (_check, lines, env, sentence) => {
    await writeConfig(lines);

    const check = await runAgent(['config', 'check'], { home, env });
    const gateway = await gatewayRefusal(env);

    expect(check.code).toBe(1);
    const found = check.stdout.split('\n').filter((line) => sentence.test(line));
    expect(found).toHaveLength(1);
    expect(gateway.code).toBe(1);
    // One sentence a line, each an error of its own, the same as the check's.
    const refused = gateway.stderr.trimEnd().split('\n');
    expect(refused.every((line) => line.startsWith('error: '))).toBe(true);
    expect(refused).toContain(`error: ${found[0]}`);
    expect(gateway.stdout).not.toContain('gateway started');
  });

  it('prints each of several problems on a line of its own, in the check and in the refusal alike', async () => {
    await writeConfig(
      listener(
        '        a: {secret: s1, deliver: "telegram:#ops"}',
        '        b: {deliver: log}',
        '        c: {secret: s2, filters: [{field: action, equals: opened}]}',
      ),
    );

    const check = await runAgent(['config', 'check'], { home });
    const gateway = await gatewayRefusal();

    const problems = check.stdout.trimEnd().split('\n');
    expect(problems).toHaveLength(3);
    expect(gateway.stderr.trimEnd().split('\n')).toEqual(problems.map((line) => `error: ${line}`));
  });

  it('a provider that cannot be loaded fails the check; the gateway starts on the built-in ticker, saying the same sentence', async () => {
    await writeConfig(['cron:', '  provider: manged']);

    const check = await runAgent(['config', 'check'], { home });
    expect(check.code).toBe(1);
    const sentence = check.stdout.split('\n').find((line) => line.includes('cron.provider "manged" cannot be used'));
    expect(sentence).toMatch(/no plugin directory was found .*; the built-in ticker fires jobs instead/);

    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
    expect(output()).toContain(sentence);
    expect(output()).toContain('cron trigger: built-in ticker');
  });

  it('a route it cannot serve while the listener is off fails the check; the gateway starts, warning with the same sentence', async () => {
    await writeConfig(['platforms:', '  webhook:', '    extra:', '      routes:', '        ops: {deliver: log}']);

    const check = await runAgent(['config', 'check'], { home });
    expect(check.code).toBe(1);
    const sentence = check.stdout.split('\n').find((line) => line.includes('routes.ops has no secret'));
    expect(sentence).toMatch(/; the listener is off now, but this stops the gateway once it is on\.$/);

    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
    expect(output()).toContain(`warn ${sentence}`);
  });

  it('a config that passes the check starts the gateway', async () => {
    await writeConfig([
      ...listener(
        '        github: {secret: s1, events: [pull_request], deliver: telegram, deliver_extra: {chat_id: "-100123"}}',
        '        pr: {secret: s2, deliver: repo_comment, deliver_extra: {repo: "{repository.full_name}", pr_number: "{number}"}, filters: [{field: action, in: [opened]}]}',
      ),
      '      metrics: true',
      '  telegram:',
      '    bot_token: "123:abc"',
      '    base_url: http://127.0.0.1:9/telegram',
    ]);

    const check = await runAgent(['config', 'check'], { home });
    expect([check.code, check.stderr]).toEqual([0, '']);
    expect(check.stdout).toMatch(/^No problems found: config\.yaml ok; /);

    const { gateway, output } = await startGatewayUntil(home, 'gateway started');
    expect(output()).toContain('routes: github, pr');
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
  });

  it('warns, naming the path, when config.yaml does not exist, and passes', async () => {
    await rm(join(home, 'config.yaml'));

    const check = await runAgent(['config', 'check'], { home });

    expect(check.code).toBe(0);
    expect(check.stderr).toBe(`warning: ${join(home, 'config.yaml')} does not exist; every setting has its default.\n`);
    expect(check.stdout).toMatch(/^No problems found: config\.yaml not found \(every setting has its default\); /);
  });

  it('a platform base URL that is no http(s) URL is refused at send in one sentence, not tried three times', async () => {
    const run = await runAgent(['send', 'telegram:-100123', 'hello'], {
      home,
      env: { TELEGRAM_BOT_TOKEN: '123:abc', TELEGRAM_BASE_URL: 'htp:/api.telegram.org' },
    });

    expect(run.code).toBe(1);
    expect(errorSentence(run)).toMatch(
      /TELEGRAM_BASE_URL \(which wins over platforms\.telegram\.base_url\) must be an http:\/\/ or https:\/\/ URL \(got "htp:\/api\.telegram\.org"\); correct it/,
    );
    expect(run.stderr).not.toContain('attempt');
  });
});
