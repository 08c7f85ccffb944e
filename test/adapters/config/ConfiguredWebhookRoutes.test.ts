import 'reflect-metadata';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfiguredWebhookRoutes } from '../../../src/adapters/config/ConfiguredWebhookRoutes.js';
import { YamlConfigLoader } from '../../../src/adapters/config/YamlConfigLoader.js';
import { readConfiguredRoutes } from '../../../src/adapters/config/webhookRouteConfig.js';
import { FileSubscriptionRepository } from '../../../src/adapters/persistence/FileSubscriptionRepository.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import type { AgentPaths } from '../../../src/application/ports/Settings.js';
import { aSubscription } from '../../contract/WebhookSubscriptionRepository.contract.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';

describe('ConfiguredWebhookRoutes', () => {
  let home: string;
  let paths: AgentPaths;
  let log: RecordingLogger;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-routes-'));
    paths = agentPathsFor(home);
    log = new RecordingLogger();
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  /** The routes source over a config.yaml holding `webhookYaml` under `platforms.webhook`. */
  async function routesFrom(webhookYaml: string): Promise<ConfiguredWebhookRoutes> {
    const indented = webhookYaml
      .split('\n')
      .map((line) => `    ${line}`)
      .join('\n');
    await writeFile(paths.configFile, `platforms:\n  webhook:\n    enabled: true\n${indented}\n`);
    const { config } = new YamlConfigLoader(paths.configFile).load();
    return new ConfiguredWebhookRoutes(config, paths, new FileSubscriptionRepository(paths), log);
  }

  function startupError(routes: ConfiguredWebhookRoutes): string {
    const { problems } = routes.report();
    if (problems.length === 0) throw new Error('expected the report to refuse the routes');
    return problems.join(' ');
  }

  const subscribe = (name: string, overrides = {}) =>
    new FileSubscriptionRepository(paths).update(name, () => ({ next: aSubscription(name, overrides), result: undefined }));

  it('serves a config route with every setting read', async () => {
    const routes = await routesFrom(`extra:
  routes:
    pr-review:
      secret: s3cret
      events: [pull_request]
      prompt: "Review #{number}"
      skills: [review, triage]
      toolsets: [web, terminal]
      allow_private_networks: true
      deliver_only: true
      deliver: repo_comment
      deliver_extra: {repo: "{repository.full_name}", pr_number: 12}
      filters:
        - {field: action, in: [opened, synchronize]}`);

    expect(routes.report().problems).toEqual([]);
    expect(await routes.find('pr-review')).toEqual({
      name: 'pr-review',
      source: 'config',
      secrets: { kind: 'secrets', values: ['s3cret'] },
      events: ['pull_request'],
      prompt: 'Review #{number}',
      skills: ['review', 'triage'],
      toolsets: ['web', 'terminal'],
      allowPrivateNetworks: true,
      deliverOnly: true,
      deliver: 'repo_comment',
      deliverExtra: { repo: '{repository.full_name}', pr_number: '12' },
      filters: [{ field: 'action', in: ['opened', 'synchronize'] }],
    });
  });

  it('fills in the defaults and falls back to extra.secret', async () => {
    const routes = await routesFrom(`extra:
  secret: global-secret
  routes:
    anything: {}`);

    expect(await routes.find('anything')).toEqual({
      name: 'anything',
      source: 'config',
      secrets: { kind: 'secrets', values: ['global-secret'] },
      events: [],
      prompt: null,
      skills: [],
      toolsets: ['agent-webhook'],
      allowPrivateNetworks: false,
      deliverOnly: false,
      deliver: 'log',
      deliverExtra: {},
      filters: [],
    });
  });

  it('takes a list of secrets for rotation', async () => {
    const routes = await routesFrom(`extra:
  routes:
    ci: {secret: [new-secret, old-secret]}`);

    expect((await routes.find('ci'))!.secrets).toEqual({ kind: 'secrets', values: ['new-secret', 'old-secret'] });
  });

  it('stops start-up naming the route that has no secret and no extra.secret to fall back on', async () => {
    const routes = await routesFrom(`extra:
  routes:
    ok: {secret: s3cret}
    open-door: {events: [push]}`);

    expect(startupError(routes)).toBe(
      `${paths.configFile}: platforms.webhook.extra.routes.open-door has no secret and platforms.webhook.extra.secret is not set either; give the route a secret (or a list of them).`,
    );
    expect(await routes.find('open-door')).toBeNull();
  });

  it('refuses INSECURE_NO_AUTH on a listener bound to every address, naming the route', async () => {
    const routes = await routesFrom(`extra:
  routes:
    dev: {secret: INSECURE_NO_AUTH}`);

    expect(startupError(routes)).toContain(
      `${paths.configFile}: platforms.webhook.extra.routes.dev.secret is INSECURE_NO_AUTH, which is refused unless the listener is bound to a loopback address; `,
    );
  });

  it.each(['127.0.0.1', 'localhost', '::1'])('allows INSECURE_NO_AUTH on a listener bound to %s', async (host) => {
    const routes = await routesFrom(`extra:
  host: "${host}"
  secret: INSECURE_NO_AUTH
  routes:
    dev: {}`);

    expect(routes.report().problems).toEqual([]);
    expect((await routes.find('dev'))!.secrets).toEqual({ kind: 'insecure_no_auth' });
  });

  it.each([
    ['deliver: pigeon', /routes\.r\.deliver must be one of log, repo_comment, telegram, discord, slack, .*, email, .* \(got "pigeon"\)/],
    ['events: push', /routes\.r\.events must be a list of names \(got "push"\)/],
    ['toolsets: [web, shell]', /routes\.r\.toolsets names an unknown toolset "shell"/],
    [
      'toolsets: [constructor]',
      /routes\.r\.toolsets names an unknown toolset "constructor"; the known ones are cronjob, terminal, web, .*, agent-webhook\./,
    ],
    ['toolsets: [toString, web]', /routes\.r\.toolsets names an unknown toolset "toString"; the known ones are /],
    ['toolsets: [__proto__]', /routes\.r\.toolsets names an unknown toolset "__proto__"; the known ones are /],
    ['content_types: text/plain', /routes\.r\.content_types must be a list of media types such as \["text\/plain"\] \(got "text\/plain"\)/],
    [
      'content_types: ["text/plain; charset=utf-8"]',
      /routes\.r\.content_types lists "text\/plain; charset=utf-8", which is not a media type; write type\/subtype without parameters/,
    ],
    ['content_types: [plain]', /routes\.r\.content_types lists "plain", which is not a media type/],
    ['filters: [{field: action, equals: opened}]', /routes\.r\.filters\[0\] must be \{field: "<dotted\.path>", in: \[<allowed values>\]\}/],
    ['deliver: repo_comment', /routes\.r\.deliver_extra\.repo must be set for deliver: repo_comment/],
    ['deliver_extra: {chat_id: [1]}', /routes\.r\.deliver_extra\.chat_id must be a string or a number/],
    ['secret: {value: hunter2}', /routes\.r\.secret must be a string or a list of strings \(got a object\)/],
    ['allow_private_networks: "yes"', /routes\.r\.allow_private_networks must be true or false \(got "yes"\)/],
  ])('stops start-up for %s', async (setting, message) => {
    const routes = await routesFrom(`extra:
  secret: s3cret
  routes:
    r: {${setting}}`);

    expect(startupError(routes)).toMatch(message);
  });

  it('reads content_types in lower case, and gives a route without them none', async () => {
    const routes = await routesFrom(`extra:
  secret: s3cret
  routes:
    sns: {content_types: [Text/Plain, " application/octet-stream ", "text/*"]}
    ci: {}`);

    expect(routes.report().problems).toEqual([]);
    expect((await routes.find('sns'))!.contentTypes).toEqual(['text/plain', 'application/octet-stream', 'text/*']);
    expect((await routes.find('ci'))!.contentTypes).toBeUndefined();
  });

  it('never puts a secret into a message', async () => {
    const routes = await routesFrom(`extra:
  routes:
    r: {secret: [hunter2, 42]}`);

    expect(startupError(routes)).not.toContain('hunter2');
  });

  it('warns about route settings it does not know', async () => {
    const routes = await routesFrom(`extra:
  routes:
    r: {secret: s3cret, colour: blue}`);

    expect(routes.report().warnings).toEqual([
      `${paths.configFile}: platforms.webhook.extra.routes.r.colour is not a route setting this version knows; it is ignored.`,
    ]);
  });

  it('serves subscriptions added, changed and removed while it runs, without a restart', async () => {
    const routes = await routesFrom('extra: {}');
    expect(await routes.find('payments')).toBeNull();

    await subscribe('payments');
    expect(await routes.find('payments')).toMatchObject({
      name: 'payments',
      source: 'subscription',
      secrets: { kind: 'secrets', values: [aSubscription('payments').secret] },
      events: ['payment_intent.succeeded'],
      toolsets: ['agent-webhook'],
      allowPrivateNetworks: false,
      deliver: 'telegram',
      deliverExtra: { chat_id: '-1001234' },
    });

    await subscribe('payments', { events: ['charge.dispute.created'] });
    expect((await routes.find('payments'))!.events).toEqual(['charge.dispute.created']);

    await new FileSubscriptionRepository(paths).update('payments', () => ({ next: null, result: undefined }));
    expect(await routes.find('payments')).toBeNull();
  });

  it('comments on the pull request of the event for a subscription delivering repo_comment', async () => {
    const routes = await routesFrom('extra: {}');
    await subscribe('reviews', { deliver: 'repo_comment', deliverChatId: null });

    expect((await routes.find('reviews'))!.deliverExtra).toEqual({ repo: '{repository.full_name}', pr_number: '{pull_request.number}' });
  });

  it('lets a config route win over a subscription of the same name, and lists config routes first', async () => {
    const routes = await routesFrom(`extra:
  routes:
    shared: {secret: from-config}
    broken: {}`);
    await subscribe('shared');
    await subscribe('broken');
    await subscribe('alpha');

    expect((await routes.find('shared'))!.source).toBe('config');
    expect(await routes.find('broken')).toBeNull();
    expect((await routes.all()).map((route) => [route.name, route.source])).toEqual([
      ['shared', 'config'],
      ['alpha', 'subscription'],
    ]);
  });

  it('does not serve a subscription whose hand-written name no route can have, and warns about it once', async () => {
    const routes = await routesFrom('extra: {}');
    const entry = { secret: 'x' };
    const long = 'p'.repeat(65);
    await writeFile(paths.webhookSubscriptionsFile, JSON.stringify({ '..': entry, 'a/b': entry, [long]: entry, payments: entry }));

    expect(await routes.find('..')).toBeNull();
    expect(await routes.find('a/b')).toBeNull();
    expect(await routes.find(long)).toBeNull();
    expect((await routes.all()).map((route) => route.name)).toEqual(['payments']);

    const warnings = log.entries.filter((entry) => entry.level === 'warn').map((entry) => entry.message);
    expect(warnings).toEqual(
      ['..', 'a/b', long].map(
        (name) =>
          `webhook subscriptions: the subscription "${name}" has a name no route can have (use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit); it is not served`,
      ),
    );
  });

  it('names a config route that no route can have, should a configuration reach it unchecked by the loader', () => {
    const { routes, problems } = readConfiguredRoutes({ secret: 's3cret', routes: { '..': {}, 'a/b': {}, ok: {} } }, false, 'config.yaml');

    expect(routes.map((route) => route.name)).toEqual(['ok']);
    expect(problems).toEqual(
      ['..', 'a/b'].map(
        (name) =>
          `config.yaml: platforms.webhook.extra.routes has the key "${name}", which is not a usable route name: use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit.`,
      ),
    );
  });

  it('keeps serving config routes when the subscription file is damaged, and says so once', async () => {
    const routes = await routesFrom(`extra:
  routes:
    ci: {secret: s3cret}`);
    await writeFile(paths.webhookSubscriptionsFile, 'not json');

    expect(await routes.find('ci')).not.toBeNull();
    expect(await routes.find('anything')).toBeNull();
    expect((await routes.all()).map((route) => route.name)).toEqual(['ci']);

    expect(log.entries.filter((entry) => entry.level === 'error')).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^webhook subscriptions are not served: .*webhook_subscriptions\.json is not valid JSON/),
      }),
    ]);
  });
});

describe('a route that coalesces', () => {
  const read = (coalesce: unknown) => readConfiguredRoutes({ secret: 's3cret', routes: { github: { coalesce } } }, false, 'config.yaml');

  it('takes a key, a window and a mode', () => {
    expect(read({ key: '{number}', window: '30s', mode: 'all' }).routes[0]?.coalesce).toEqual({
      key: '{number}',
      windowMs: 30_000,
      mode: 'all',
    });
    expect(read({ key: '{number}', window: '5m' }).routes[0]?.coalesce?.mode).toBe('latest');
  });

  it('refuses a bad window or mode in one sentence naming the key and what to write', () => {
    expect(read({ key: '{number}', window: 'soon' }).problems).toEqual([
      'config.yaml: platforms.webhook.extra.routes.github.coalesce.window must be a duration: write a whole number with a unit, such as 500ms, 30s, 5m or 1h, of at most 24h (got "soon").',
    ]);
    expect(read({ key: '{number}', window: '3s', mode: 'first' }).problems).toEqual([
      'config.yaml: platforms.webhook.extra.routes.github.coalesce.mode must be latest or all (got "first").',
    ]);
  });
});
