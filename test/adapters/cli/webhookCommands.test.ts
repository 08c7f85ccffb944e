import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';
import 'reflect-metadata';
import type { IncomingMessage } from 'node:http';
import yargs from 'yargs';
import { commandLevelOf, usageErrorFor } from '../../../src/adapters/cli/commandLevel.js';
import { exitCodeFor, messageFor } from '../../../src/adapters/cli/errorReport.js';
import { registerWebhookCommands, type WebhookApp } from '../../../src/adapters/cli/webhookCommands.js';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import type { WebhookRunRecord } from '../../../src/domain/webhook/webhookRunRecord.js';
import { HttpWebhookClient } from '../../../src/adapters/http/HttpWebhookClient.js';
import { WebhookSignatureVerifier } from '../../../src/adapters/security/WebhookSignatureVerifier.js';
import { SystemClock } from '../../../src/adapters/system/SystemClock.js';
import { ListWebhookRuns } from '../../../src/application/webhook/ListWebhookRuns.js';
import { FakeProcessIdentity } from '../../support/fakes/FakeProcessIdentity.js';
import { RecordingDeliveryChannel } from '../../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingRepoCommenter } from '../../support/fakes/RecordingRepoCommenter.js';
import { ListWebhooks } from '../../../src/application/webhook/subscriptions/ListWebhooks.js';
import { RemoveWebhookSubscription } from '../../../src/application/webhook/subscriptions/RemoveWebhookSubscription.js';
import { SubscribeWebhook } from '../../../src/application/webhook/subscriptions/SubscribeWebhook.js';
import { TestWebhookSubscription } from '../../../src/application/webhook/subscriptions/TestWebhookSubscription.js';
import { FakeWebhookRoutes, aRoute } from '../../support/fakes/FakeWebhookRoutes.js';
import { InMemorySubscriptionRepository } from '../../support/fakes/InMemorySubscriptionRepository.js';
import { InMemoryWebhookRunRecords } from '../../support/fakes/InMemoryWebhookRunRecords.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { SequentialSecrets } from '../../support/fakes/RecordingWebhookClient.js';
import { fakeTerminal } from '../../support/fakeTerminal.js';
import { LocalWebServer } from '../../support/localWebServer.js';
import { redeliverWebhookRun } from '../../support/runPipeline.js';

/** A stand-in listener: checks the signature with the real verifier and answers as the listener does. */
async function listener(secret: () => string) {
  const received: Array<{ event: string | undefined; body: unknown }> = [];
  const verifier = new WebhookSignatureVerifier(new SystemClock());
  const server = await LocalWebServer.start({
    '/webhooks/payments': (request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const rawBody = Buffer.concat(chunks);
        if (!verifier.verify({ rawBody, headers: request.headers as Record<string, string> }, [secret()]).valid) {
          response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Invalid signature"}');
          return;
        }
        received.push({ event: request.headers['x-github-event'] as string | undefined, body: JSON.parse(rawBody.toString('utf8')) });
        response.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"accepted","route":"payments","event":"test"}');
      });
    },
  });
  return { server, received, port: Number(new URL(server.url()).port) };
}

/** `agent webhook …` driven in-process on fakes, with the real HTTP client aimed at 127.0.0.1:`port`. */
function webhookCli(port = 8644, options: { listenerEnabled?: boolean } = {}) {
  const repository = new InMemorySubscriptionRepository();
  const routes = new FakeWebhookRoutes([aRoute('github', { events: ['pull_request'], deliver: 'repo_comment' })], repository);
  const clock = new ManualClock('2026-06-01T08:00:00Z');
  const records = new InMemoryWebhookRunRecords();
  const client = new HttpWebhookClient({ platforms: { webhook: { extra: { host: '0.0.0.0', port } } } } as unknown as AgentConfig);
  const ledger = new InMemoryRunLedger(undefined, () => clock.now());
  const channel = new RecordingDeliveryChannel();
  const commenter = new RecordingRepoCommenter();
  const app: WebhookApp = {
    subscribeWebhook: new SubscribeWebhook(repository, routes, new SequentialSecrets(), clock),
    listWebhooks: new ListWebhooks(routes),
    removeWebhookSubscription: new RemoveWebhookSubscription(repository, routes),
    testWebhookSubscription: new TestWebhookSubscription(repository, routes, client, clock),
    urlOf: (route) => client.urlOf(route),
    listWebhookRuns: new ListWebhookRuns(records, routes, ledger),
    redeliverWebhookRun: redeliverWebhookRun({
      ledger: ledger,
      records: records,
      channel: channel,
      commenter: commenter,
      clock: clock,
      identity: new FakeProcessIdentity(),
      log: new RecordingLogger(),
    }),
    timeZone: 'Europe/Berlin',
    listenerEnabled: options.listenerEnabled ?? true,
  };
  /** Runs the command; `error` is what it threw, if anything. */
  const attempt = async (args: string[]) => {
    const { io, stdout, stderr } = fakeTerminal(false);
    const cli = yargs(['webhook', ...args]);
    // As the executable does: a flag check's sentence becomes a usage error about the command.
    cli.strict().fail((message, error) => {
      if (error && error.name !== 'YError') throw error;
      throw usageErrorFor(message ?? error?.message ?? '', commandLevelOf(cli));
    });
    registerWebhookCommands(cli, async () => app, io);
    try {
      await cli.parseAsync();
      return { stdout: stdout(), stderr: stderr(), error: null };
    } catch (error) {
      return { stdout: stdout(), stderr: stderr(), error };
    }
  };
  const run = async (...args: string[]) => {
    const { stdout, stderr, error } = await attempt(args);
    if (error) throw error;
    return { stdout, stderr };
  };
  /** What `agent` would print for a command that fails: stdout, the line on stderr and the exit code. */
  const failure = async (...args: string[]) => {
    const { stdout, error } = await attempt(args);
    if (!error) throw new Error(`expected agent webhook ${args.join(' ')} to fail`);
    return { stdout, message: messageFor(error, false), code: exitCodeFor(error) };
  };
  return { repository, records, ledger, channel, commenter, clock, run, failure };
}

describe('agent webhook', () => {
  it('subscribe takes --events and --skills before the name, comma-separated or repeated', async () => {
    const cli = webhookCli();

    await cli.run('subscribe', '--events', 'push,ping', '--events', 'release', '--skills', 'triage', 'hooks');

    expect(cli.repository.get('hooks')).toMatchObject({ events: ['push', 'ping', 'release'], skills: ['triage'] });
  });

  it('subscribe prints the URL, with 0.0.0.0 shown as 127.0.0.1, and the generated secret', async () => {
    const cli = webhookCli();

    const { stdout } = await cli.run(
      'subscribe',
      'payments',
      '--events',
      'payment_intent.succeeded,charge.dispute.created',
      '--deliver',
      'telegram',
      '--deliver-chat-id',
      '-1001234',
    );

    expect(stdout).toBe(
      [
        "Created webhook subscription 'payments'.",
        'URL:     http://127.0.0.1:8644/webhooks/payments',
        'Secret:  secret-1',
        'Events:  payment_intent.succeeded, charge.dispute.created',
        'Deliver: telegram:-1001234',
        '',
      ].join('\n'),
    );
    expect(cli.repository.get('payments')).toMatchObject({ deliver: 'telegram', deliverChatId: '-1001234' });
  });

  it('subscribe warns on stderr, in one line, when the listener is disabled in config, and still saves', async () => {
    const cli = webhookCli(8644, { listenerEnabled: false });

    const { stdout, stderr } = await cli.run('subscribe', 'payments');

    expect(stdout).toMatch(/^Created webhook subscription 'payments'\.\n/);
    expect(stderr).toBe(
      'warning: the webhook listener is disabled, so nothing answers at this URL yet; set "platforms.webhook.enabled: true" in config.yaml and (re)start "agent gateway".\n',
    );
    expect(cli.repository.get('payments')).toBeDefined();
  });

  it('subscribe says nothing on stderr when the listener is enabled', async () => {
    expect((await webhookCli().run('subscribe', 'payments')).stderr).toBe('');
  });

  it('subscribe again keeps the secret unless --secret is given', async () => {
    const cli = webhookCli();
    await cli.run('subscribe', 'payments');

    expect((await cli.run('subscribe', 'payments', '--prompt', 'Paid: {data.object.id}')).stdout).toMatch(
      /^Replaced .*\n.*\nSecret: {2}secret-1\n/,
    );
    expect((await cli.run('subscribe', 'payments', '--secret', 'whsec_given')).stdout).toContain('Secret:  whsec_given\n');
    expect(cli.repository.get('payments')!.prompt).toBeNull();
  });

  it('subscribe refuses a bad name with a sentence and exit code 1', async () => {
    expect(await webhookCli().failure('subscribe', 'Bad Name')).toMatchObject({
      message:
        'error: The name "Bad Name" cannot be used for a subscription: use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit.',
      code: 1,
    });
  });

  it('list shows config.yaml routes and subscriptions, without secrets', async () => {
    const cli = webhookCli();
    await cli.run('subscribe', 'payments', '--deliver', 'slack');

    expect((await cli.run('list')).stdout).toBe(
      [
        'NAME      SOURCE        EVENTS        DELIVER       URL',
        'github    config.yaml   pull_request  repo_comment  http://127.0.0.1:8644/webhooks/github',
        'payments  subscription  all           slack         http://127.0.0.1:8644/webhooks/payments',
        '',
      ].join('\n'),
    );
    const json = (await cli.run('list', '--json')).stdout;
    expect(JSON.parse(json).map((route: { name: string }) => route.name)).toEqual(['github', 'payments']);
    expect(json).not.toContain('secret-1');
  });

  it('remove deletes a subscription, and says when there is none', async () => {
    const cli = webhookCli();
    await cli.run('subscribe', 'payments');

    expect((await cli.run('remove', 'payments')).stdout).toBe("Removed webhook subscription 'payments'.\n");
    expect(await cli.failure('rm', 'payments')).toMatchObject({
      message: 'error: No webhook subscription is named "payments"; see "agent webhook list".',
      code: 1,
    });
  });

  describe('test', () => {
    let stub: Awaited<ReturnType<typeof listener>> | null = null;

    afterEach(async () => {
      await stub?.server.close();
      stub = null;
    });

    it('signs a sample payload with the subscription secret, sends it with event test, and prints status and body', async () => {
      let secret = '';
      stub = await listener(() => secret);
      const cli = webhookCli(stub.port);
      await cli.run('subscribe', 'payments');
      secret = cli.repository.get('payments')!.secret;

      const { stdout } = await cli.run('test', 'payments');

      expect(stdout).toBe(
        `POST http://127.0.0.1:${stub.port}/webhooks/payments (event test): 202\n{"status":"accepted","route":"payments","event":"test"}\n`,
      );
      expect(stub.received).toEqual([{ event: 'test', body: expect.objectContaining({ event: 'test', subscription: 'payments' }) }]);
    });

    it('sends with the event kind given by --event instead of test', async () => {
      let secret = '';
      stub = await listener(() => secret);
      const cli = webhookCli(stub.port);
      await cli.run('subscribe', 'payments');
      secret = cli.repository.get('payments')!.secret;

      const { stdout } = await cli.run('test', 'payments', '--event', 'charge.dispute.created');

      expect(stdout).toMatch(
        new RegExp(`^POST http://127\\.0\\.0\\.1:${stub.port}/webhooks/payments \\(event charge\\.dispute\\.created\\): 202\\n`),
      );
      expect(stub.received).toEqual([
        { event: 'charge.dispute.created', body: expect.objectContaining({ event: 'charge.dispute.created' }) },
      ]);
    });

    it.each([
      ['', /^error: --event needs a value; give one or leave the flag out\.$/],
      ['two\nlines', /^error: --event must be an event kind such as "pull_request"/],
    ])('refuses --event %j as a usage error', async (kind, sentence) => {
      const cli = webhookCli();
      await cli.run('subscribe', 'payments');

      const { message, code } = await cli.failure('test', 'payments', '--event', kind);

      expect(message).toMatch(sentence);
      expect(message.split('\n')).toHaveLength(1);
      expect(code).toBe(2);
    });

    it('sends the --payload given', async () => {
      let secret = '';
      stub = await listener(() => secret);
      const cli = webhookCli(stub.port);
      await cli.run('subscribe', 'payments', '--secret', 'whsec_given');
      secret = 'whsec_given';

      await cli.run('test', 'payments', '--payload', '{"type":"payment_intent.succeeded"}');

      expect(stub.received[0]!.body).toEqual({ type: 'payment_intent.succeeded' });
    });

    it('prints a refusal and fails with exit code 1', async () => {
      stub = await listener(() => 'another secret');
      const cli = webhookCli(stub.port);
      await cli.run('subscribe', 'payments');

      expect(await cli.failure('test', 'payments')).toEqual({
        stdout: `POST http://127.0.0.1:${stub.port}/webhooks/payments (event test): 401\n{"error":"Invalid signature"}\n`,
        message: 'error: The listener refused the test event (401); see its answer above.',
        code: 1,
      });
    });

    it('fails for a config.yaml route, saying it works only for dynamic subscriptions', async () => {
      const { message, code } = await webhookCli().failure('test', 'github');

      expect(message).toMatch(/^error: "agent webhook test" works only for dynamic subscriptions; "github" is a route of config\.yaml/);
      expect(code).toBe(1);
    });

    it('says in one sentence that no listener is running', async () => {
      const closed = await LocalWebServer.start({});
      const port = Number(new URL(closed.url()).port);
      await closed.close();
      const cli = webhookCli(port);
      await cli.run('subscribe', 'payments');

      expect(await cli.failure('test', 'payments')).toMatchObject({
        message: `error: No webhook listener answers at http://127.0.0.1:${port} (ECONNREFUSED); start it with "agent gateway" (platforms.webhook.enabled: true) and try again.`,
        code: 1,
      });
    });

    it('refuses a --payload that is not a JSON object as a usage error', async () => {
      const cli = webhookCli();
      await cli.run('subscribe', 'payments');

      expect(await cli.failure('test', 'payments', '--payload', '[1,2]')).toMatchObject({
        message: `error: --payload must be a JSON object such as '{"action":"opened"}'.`,
        code: 2,
      });
    });
  });

  describe('runs', () => {
    const record = (n: number, overrides: Partial<WebhookRunRecord> = {}): WebhookRunRecord => ({
      eventId: `e${n}`,
      route: 'github',
      event: 'pull_request',
      deliveryId: `d-${n}`,
      receivedAt: `2026-06-01T08:0${n}:00.000Z`,
      startedAt: `2026-06-01T08:0${n}:01.000Z`,
      outcome: 'delivered',
      deliveredTo: 'octo/widgets#12',
      prompt: 'Review it.',
      answer: 'LGTM',
      error: null,
      ...overrides,
    });

    it('says "No webhook runs." when there are none', async () => {
      expect((await webhookCli().run('runs')).stdout).toBe('No webhook runs.\n');
      expect((await webhookCli().run('runs', 'github', '--json')).stdout).toBe('[]\n');
    });

    it("lists time, the run's id, route, event, delivery id, tokens, cost and outcome, newest first, in the configured zone", async () => {
      const cli = webhookCli();
      await cli.records.save(
        record(1, {
          usage: { input_tokens: 1200, output_tokens: 80, cached_input_tokens: 0, model_turns: 2, tool_calls: 1 },
          costUsd: 0.0042,
        }),
      );
      await cli.records.save(
        record(3, {
          route: 'payments',
          event: 'charge.dispute.created',
          outcome: 'run_failed',
          error: 'idle timeout: no output for 600 s\nmore',
          answer: null,
        }),
      );
      await cli.records.save(record(2, { outcome: 'delivery_failed', error: 'delivery to octo/widgets#12 failed: gh is not logged in' }));

      expect((await cli.run('runs')).stdout).toBe(
        [
          'TIME (Europe/Berlin)  ID  ROUTE     EVENT                   DELIVERY ID  TOKENS             COST     OUTCOME',
          '2026-06-01 10:03:01   e3  payments  charge.dispute.created  d-3          -                  -        run_failed: idle timeout: no output for 600 s',
          '2026-06-01 10:02:01   e2  github    pull_request            d-2          -                  -        delivery_failed: delivery to octo/widgets#12 failed: gh is not logged in',
          '2026-06-01 10:01:01   e1  github    pull_request            d-1          1,200 in / 80 out  $0.0042  delivered to octo/widgets#12',
          '',
        ].join('\n'),
      );
    });

    it('lists only the route given, at most --limit runs, and everything as JSON with --json', async () => {
      const cli = webhookCli();
      for (const n of [1, 2, 3]) await cli.records.save(record(n));
      await cli.records.save(record(4, { route: 'payments' }));

      const json = JSON.parse((await cli.run('runs', 'github', '--json', '--limit', '2')).stdout);

      expect(json).toEqual([
        expect.objectContaining({
          started_at: '2026-06-01T08:03:01.000Z',
          route: 'github',
          event: 'pull_request',
          delivery_id: 'd-3',
          event_id: 'e3',
          outcome: 'delivered',
          delivered_to: 'octo/widgets#12',
          answer: 'LGTM',
          prompt: 'Review it.',
          error: null,
        }),
        expect.objectContaining({ delivery_id: 'd-2' }),
      ]);
    });

    it('refuses a --limit that is not a whole number of 1 or more as a usage error', async () => {
      expect(await webhookCli().failure('runs', '--limit', 'ten')).toMatchObject({
        message: expect.stringMatching(/^error: --limit must be a whole number of 1 or more, not "ten"/),
        code: 2,
      });
    });
  });
});
