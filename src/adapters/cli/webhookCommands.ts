import type { Argv } from 'yargs';
import type { ListWebhookRuns } from '../../application/webhook/ListWebhookRuns.js';
import type { RedeliverWebhookRun } from '../../application/webhook/RedeliverWebhookRun.js';
import type { ListWebhooks } from '../../application/webhook/subscriptions/ListWebhooks.js';
import type { RemoveWebhookSubscription } from '../../application/webhook/subscriptions/RemoveWebhookSubscription.js';
import type { SubscribeWebhook } from '../../application/webhook/subscriptions/SubscribeWebhook.js';
import type { TestWebhookSubscription } from '../../application/webhook/subscriptions/TestWebhookSubscription.js';
import { KNOWN_PLATFORMS } from '../../domain/DeliveryTarget.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { WebhookError } from '../../domain/errors.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import { subscriptionRoute } from '../../domain/webhook/WebhookSubscription.js';
import { CliError } from './CliError.js';
import { jsonFlag, writeJson, writeLine, type CliIO } from './CliIO.js';
import { CliUsageError } from './CliUsageError.js';
import { MISSING_COMMAND } from './commandLevel.js';
import { argument, repeatableText, text, wholeNumber } from './flagValues.js';
import { webhookRunJson, webhookRunTable } from './formatWebhookRuns.js';
import { webhookRedeliveryLines } from './formatRedelivery.js';
import { webhookRedeliveryJson, webhookRouteJson, webhookTestJson } from './jsonViews.js';
import { textTable } from './textTable.js';

/** What the webhook commands need, built on first use by the composition root. */
export interface WebhookApp {
  subscribeWebhook: SubscribeWebhook;
  listWebhooks: ListWebhooks;
  removeWebhookSubscription: RemoveWebhookSubscription;
  testWebhookSubscription: TestWebhookSubscription;
  /** Where a route is reached on this machine's listener (a wildcard host shown as 127.0.0.1). */
  urlOf(route: string): string;
  listWebhookRuns: ListWebhookRuns;
  redeliverWebhookRun: RedeliverWebhookRun;
  /** The zone run times are shown in (the configured one, as for cron). */
  timeZone: string;
  /** Whether config.yaml turns the listener on (`platforms.webhook.enabled: true`). */
  listenerEnabled: boolean;
}

/** How many runs `agent webhook runs` lists without --limit. */
const DEFAULT_RUNS_LIMIT = 20;

/** An event kind is sent as a header: printable ASCII, no spaces at either end. */
function eventKind(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const kind = Array.isArray(value) ? null : text('--event')(value);
  if (kind === null || !/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(kind)) {
    throw new CliUsageError(
      `--event must be an event kind such as "pull_request" (printable characters, given once), not ${JSON.stringify(value)}.`,
    );
  }
  return kind;
}

/** `--events a,b` and `--skills a,b`: comma-separated, repeatable. */
function commaList(values: readonly string[] | undefined): string[] | undefined {
  return values
    ?.flatMap((value) => value.split(','))
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function deliveryOf(route: WebhookRoute): string {
  const chatId = route.deliverExtra.chat_id;
  return chatId ? `${route.deliver}:${chatId}` : route.deliver;
}

/** The routes served, then those of config.yaml that are not, marked so in place of their URL. */
function routeTable(routes: readonly WebhookRoute[], unusable: ReadonlyArray<{ name: string }>, urlOf: (route: string) => string): string {
  const header = ['NAME', 'SOURCE', 'EVENTS', 'DELIVER', 'URL'];
  const rows = routes.map((route) => [
    route.name,
    route.source === 'config' ? 'config.yaml' : 'subscription',
    route.events.length > 0 ? route.events.join(',') : 'all',
    deliveryOf(route),
    urlOf(route.name),
  ]);
  for (const route of unusable) rows.push([route.name, 'config.yaml', '-', '-', 'not served (see below)']);
  return textTable(header, rows);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function parsePayload(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    throw new CliUsageError(`--payload is not valid JSON (${(error as Error).message}); give a JSON object such as '{"action":"opened"}'.`);
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new CliUsageError(`--payload must be a JSON object such as '{"action":"opened"}'.`);
  }
  return payload as Record<string, unknown>;
}

/** `agent webhook …`: dynamic subscriptions (docs/webhooks.md) and a look at every route served. */
export function registerWebhookCommands(yargs: Argv, app: () => Promise<WebhookApp>, io: CliIO): Argv {
  return yargs.command('webhook', 'Manage webhook subscriptions', (webhook) =>
    webhook
      .command(
        'subscribe <name>',
        'Create or replace a dynamic subscription, served at /webhooks/<name> without a restart',
        (y) =>
          y
            .positional('name', {
              type: 'string',
              demandOption: true,
              coerce: argument('name'),
              describe: '1 to 64 letters, digits, "-" and "_", starting with a letter or digit',
            })
            .option('events', {
              type: 'string',
              coerce: repeatableText('--events'),
              describe: 'Event kinds to accept, comma-separated (default: all)',
            })
            .option('prompt', {
              type: 'string',
              coerce: text('--prompt'),
              describe: 'Prompt template, e.g. "Summarise {pull_request.title}" (default: the whole payload)',
            })
            .option('skills', {
              type: 'string',
              alias: 'skill',
              coerce: repeatableText('--skills', { value: [] as string[], means: 'no skills' }),
              describe: 'Skills, comma-separated; the first one found is loaded (--no-skills for none)',
            })
            .option('deliver', {
              type: 'string',
              coerce: text('--deliver', { value: 'log', means: 'answers are only logged' }),
              describe: `log (default), repo_comment or a chat platform (${KNOWN_PLATFORMS.join(', ')}); --no-deliver = log`,
            })
            .option('deliver-chat-id', {
              type: 'string',
              coerce: text('--deliver-chat-id'),
              describe: 'Chat to deliver to (default: the platform home channel)',
            })
            .option('deliver-only', {
              type: 'boolean',
              default: false,
              describe: 'Deliver the rendered prompt as the message, without running the agent',
            })
            .option('coalesce-key', {
              type: 'string',
              coerce: text('--coalesce-key'),
              describe:
                'Template naming what events share, e.g. "{repository.full_name}#{pull_request.number}": events of one key make one run',
            })
            .option('coalesce-window', {
              type: 'string',
              coerce: text('--coalesce-window'),
              describe: 'With --coalesce-key: the run starts this long after the last event of the key (500ms, 30s, 5m, 1h)',
            })
            .option('coalesce-mode', {
              type: 'string',
              coerce: text('--coalesce-mode'),
              describe: 'With --coalesce-key: latest (default, the last payload) or all (every payload, up to 20)',
            })
            .option('secret', {
              type: 'string',
              coerce: text('--secret'),
              describe: 'Signing secret (default: generated, kept when replacing)',
            })
            .option('json', jsonFlag('the subscription (its secret included, as in the text) and its URL')),
        async (argv) => {
          const webhooks = await app();
          const { subscription, created } = await webhooks.subscribeWebhook.execute({
            name: argv.name,
            events: commaList(argv.events),
            prompt: argv.prompt ?? null,
            skills: commaList(argv.skills),
            deliver: argv.deliver ?? null,
            deliverChatId: argv.deliverChatId ?? null,
            deliverOnly: argv.deliverOnly === true,
            coalesceKey: argv.coalesceKey ?? null,
            coalesceWindow: argv.coalesceWindow ?? null,
            coalesceMode: argv.coalesceMode ?? null,
            secret: argv.secret ?? null,
          });
          if (argv.json) {
            writeJson(io.stdout, {
              created,
              ...webhookRouteJson(subscriptionRoute(subscription), webhooks.urlOf(subscription.name)),
              secret: subscription.secret,
            });
          } else {
            writeLine(io.stdout, `${created ? 'Created' : 'Replaced'} webhook subscription '${subscription.name}'.`);
            writeLine(io.stdout, `URL:     ${webhooks.urlOf(subscription.name)}`);
            writeLine(io.stdout, `Secret:  ${subscription.secret}`);
            writeLine(io.stdout, `Events:  ${subscription.events.length > 0 ? subscription.events.join(', ') : 'all'}`);
            writeLine(io.stdout, `Deliver: ${deliveryOf(subscriptionRoute(subscription))}`);
          }
          if (!webhooks.listenerEnabled) {
            writeLine(
              io.stderr,
              'warning: the webhook listener is disabled, so nothing answers at this URL yet; set "platforms.webhook.enabled: true" in config.yaml and (re)start "agent gateway".',
            );
          }
        },
      )
      .command(
        ['list', 'ls'],
        'Show every route: config.yaml routes, then subscriptions; one that cannot be served is marked so, with the reason',
        (y) => y.option('json', { type: 'boolean', default: false, describe: 'Print the routes as JSON (without secrets)' }),
        async (argv) => {
          const webhooks = await app();
          const { routes, unusable, subscriptionProblems, storeProblem } = await webhooks.listWebhooks.execute();
          if (argv.json) {
            const shown = [
              ...routes.map((route) => webhookRouteJson(route, webhooks.urlOf(route.name))),
              ...unusable.map((route) => ({ name: route.name, source: 'config', served: false, problems: route.problems })),
            ];
            writeLine(io.stdout, JSON.stringify(shown, null, 2));
          } else if (routes.length + unusable.length === 0 && subscriptionProblems.length === 0) {
            if (storeProblem === null) writeLine(io.stdout, 'No webhook routes. Add one with: agent webhook subscribe <name>');
          } else {
            if (routes.length + unusable.length > 0)
              writeLine(
                io.stdout,
                routeTable(routes, unusable, (name) => webhooks.urlOf(name)),
              );
            // A route that is not served says why, one sentence a line, each naming the route.
            for (const problem of [...unusable.flatMap((route) => route.problems), ...subscriptionProblems])
              writeLine(io.stdout, `not served: ${problem}`);
          }
          if (storeProblem !== null)
            throw new WebhookError(
              ERROR_CODES.WEBHOOK.SUBSCRIPTIONS_DAMAGED,
              `No subscription is listed or served: ${lowerFirst(storeProblem)}`,
            );
        },
      )
      .command(
        ['remove <name>', 'rm <name>'],
        'Delete a dynamic subscription',
        (y) =>
          y
            .positional('name', { type: 'string', demandOption: true, coerce: argument('name') })
            .option('json', jsonFlag('the removed subscription (without its secret)')),
        async (argv) => {
          const webhooks = await app();
          const removed = await webhooks.removeWebhookSubscription.execute({ name: argv.name });
          if (argv.json) writeJson(io.stdout, webhookRouteJson(subscriptionRoute(removed), webhooks.urlOf(removed.name)));
          else writeLine(io.stdout, `Removed webhook subscription '${removed.name}'.`);
        },
      )
      .command(
        'test <name>',
        'Send a signed test event to a subscription on the running listener',
        (y) =>
          y
            .positional('name', { type: 'string', demandOption: true, coerce: argument('name') })
            .option('payload', { type: 'string', coerce: text('--payload'), describe: 'JSON object to send (default: a small sample)' })
            .option('event', { type: 'string', coerce: eventKind, describe: 'Event kind to send (default: test)' })
            .option('json', jsonFlag("the URL, the event kind and the listener's answer (status and body)")),
        async (argv) => {
          const payload = parsePayload(argv.payload);
          const result = await (await app()).testWebhookSubscription.execute({ name: argv.name, payload, event: argv.event ?? null });
          if (argv.json) writeJson(io.stdout, webhookTestJson(result));
          else {
            writeLine(io.stdout, `POST ${result.url} (event ${result.event}): ${result.status}`);
            if (result.body !== '') writeLine(io.stdout, result.body);
          }
          if (result.status >= 400) {
            throw new CliError(
              ERROR_CODES.WEBHOOK.TEST_REFUSED,
              `The listener refused the test event (${result.status}); see its answer above.`,
            );
          }
        },
      )
      .command(
        'runs [route]',
        'List recent webhook runs, newest first: time, route, event, delivery id, outcome',
        (y) =>
          y
            .positional('route', { type: 'string', coerce: argument('route'), describe: "Only this route's runs" })
            .option('json', { type: 'boolean', default: false, describe: 'Print the run records as JSON' })
            .option('limit', {
              type: 'string',
              coerce: wholeNumber('--limit', { min: 1 }),
              describe: 'Show at most this many runs (default 20)',
            }),
        async (argv) => {
          const webhooks = await app();
          const runs = await webhooks.listWebhookRuns.execute({ route: argv.route ?? null, limit: argv.limit ?? DEFAULT_RUNS_LIMIT });
          if (argv.json) writeLine(io.stdout, JSON.stringify(runs.map(webhookRunJson), null, 2));
          else if (runs.length === 0) writeLine(io.stdout, 'No webhook runs.');
          else writeLine(io.stdout, webhookRunTable(runs, webhooks.timeZone));
        },
      )
      .command(
        'redeliver <run>',
        'Deliver the recorded answer of a webhook run again, where its run delivered it, without running the agent',
        (y) =>
          y
            .positional('run', {
              type: 'string',
              demandOption: true,
              coerce: argument('run'),
              describe:
                'The run\'s id: the ID column of "agent webhook runs" (`id` in its --json); or a route\'s name: its latest run with an answer',
            })
            .option('json', jsonFlag('the outcome (run id, route, status, where it went)')),
        async (argv) => {
          if (argv.run.trim() === '')
            throw new CliUsageError('Give the id of the webhook run to deliver again, as "agent webhook runs" lists it.');
          const redelivered = await (await app()).redeliverWebhookRun.execute({ run: argv.run });
          if (argv.json) writeJson(io.stdout, webhookRedeliveryJson(redelivered));
          else for (const line of webhookRedeliveryLines(redelivered)) writeLine(io.stdout, line);
          if (redelivered.report.status !== 'delivered') process.exitCode = 1;
        },
      )
      .demandCommand(1, MISSING_COMMAND),
  );
}
