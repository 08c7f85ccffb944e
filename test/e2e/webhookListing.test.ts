import { errorSentence, inAScratchHomeEachTest, runAgent, writeHomeFile } from './agentCli.js';
import { commandModelLines, webhookListenerLines } from './configLines.js';

/** What `agent webhook list` and `agent webhook runs` tell about routes that are wrong or not there. */
describe('agent webhook list and runs, end to end', () => {
  let home: string;
  inAScratchHomeEachTest((made) => (home = made));

  /** A config.yaml with the route `github`, the routes `extra` (8-space indented lines) after it. */
  const configWithRoutes = (extra: string[] = []) =>
    writeHomeFile(
      home,
      'config.yaml',
      [
        ...commandModelLines([process.execPath, `${home}/model.mjs`]),
        ...webhookListenerLines(8644, 'shared-secret'),
        '        github:',
        '          events: [pull_request]',
        ...extra,
        '',
      ].join('\n'),
    );

  it('lists a config route it cannot serve, marked so, with the reason', async () => {
    await configWithRoutes(['        ops:', '          deliver: telegram:#ops']);

    const run = await runAgent(['webhook', 'list'], { home });

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^github +config\.yaml +pull_request +log +http:\/\/127\.0\.0\.1:8644\/webhooks\/github$/m);
    expect(run.stdout).toMatch(/^ops +config\.yaml +- +- +not served \(see below\)$/m);
    expect(run.stdout).toContain('not served: ');
    expect(run.stdout).toContain('platforms.webhook.extra.routes.ops.deliver must be one of log, repo_comment, telegram');
    const json = JSON.parse((await runAgent(['webhook', 'list', '--json'], { home })).stdout) as Array<{
      name: string;
      served?: boolean;
      problems?: string[];
    }>;
    expect(json.find((route) => route.name === 'ops')).toMatchObject({
      served: false,
      problems: [expect.stringContaining('routes.ops.deliver must be')],
    });
  });

  it('exits 1 on a broken subscriptions file, saying so once, after the config routes', async () => {
    await configWithRoutes();
    await writeHomeFile(home, 'webhook_subscriptions.json', '{broken');

    const run = await runAgent(['webhook', 'list'], { home });

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^github +config\.yaml/m);
    expect(errorSentence(run)).toMatch(/^error: No subscription is listed or served: .*webhook_subscriptions\.json is not valid JSON/);
    const runs = await runAgent(['webhook', 'runs', 'payments'], { home });
    expect(runs.code).toBe(1);
    expect(errorSentence(runs)).toMatch(
      /^error: No run was recorded for the route "payments", and whether it is a subscription cannot be told: .*webhook_subscriptions\.json is not valid JSON/,
    );
  });

  it('exits 1 for the runs of a route that does not exist, naming the routes that do', async () => {
    await configWithRoutes();
    expect((await runAgent(['webhook', 'subscribe', 'payments'], { home })).code).toBe(0);

    const run = await runAgent(['webhook', 'runs', 'githb'], { home });

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(errorSentence(run)).toBe(
      'error: No webhook route is named "githb" and no run was recorded under that name; the routes are github, payments (see "agent webhook list").',
    );
    const known = await runAgent(['webhook', 'runs', 'github'], { home });
    expect([known.code, known.stdout]).toEqual([0, 'No webhook runs.\n']);
  });
});
