import type { Argv } from 'yargs';
import type { ListFailedEvents } from '../../application/events/ListFailedEvents.js';
import type { ResendFailedEvents } from '../../application/events/ResendFailedEvents.js';
import type { TestEventSubscription } from '../../application/events/TestEventSubscription.js';
import type { FailedEvent } from '../../application/ports/EventOutbox.js';
import { jsonFlag, writeJson, writeLine, type CliIO } from './CliIO.js';
import { CliUsageError } from './CliUsageError.js';
import { MISSING_COMMAND } from './commandLevel.js';
import { argument, wholeNumber } from './flagValues.js';
import { textTable } from './textTable.js';
import { wallClockWithSeconds } from './formatJobDetails.js';

/** How many events `agent events failed` lists without --limit. */
const DEFAULT_FAILED_LIMIT = 50;

/** What `agent events` needs. */
export interface EventsApp {
  testEventSubscription: TestEventSubscription;
  listFailedEvents: ListFailedEvents;
  resendFailedEvents: ResendFailedEvents;
  timeZone: string;
}

/** An undeliverable event as `agent events failed --json` prints it. */
export function failedEventJson(failed: FailedEvent) {
  return {
    subscription: failed.subscription,
    event_id: failed.event.id,
    type: failed.event.type,
    timestamp: failed.event.timestamp,
    created_at: failed.createdAt.toISOString(),
    failed_at: failed.failedAt.toISOString(),
    attempts: failed.attempts,
    error: failed.error,
  };
}

/** `agent events test <name>`, `agent events failed` and `agent events resend`: the events out of `events_out` (docs/events.md). */
export function registerEventsCommands(yargs: Argv, app: () => Promise<EventsApp>, io: CliIO): Argv {
  return yargs.command('events', 'Test the receivers of run events (events_out) and list the events they never took', (events) =>
    events
      .command(
        'test <name>',
        "Send one signed sample event (type event.test) to an events_out receiver now and print its answer's status",
        (y) =>
          y
            .positional('name', {
              type: 'string',
              demandOption: true,
              coerce: argument('name'),
              describe: 'The subscription: a key of events_out in config.yaml',
            })
            .option('json', jsonFlag('the subscription, its URL, the event id and the HTTP status')),
        async (argv) => {
          if (argv.name.trim() === '') throw new CliUsageError('Give the name of the events_out subscription to test.');
          const tested = await (await app()).testEventSubscription.execute({ name: argv.name });
          if (argv.json)
            writeJson(io.stdout, { subscription: tested.subscription, url: tested.url, event_id: tested.eventId, status: tested.status });
          else
            writeLine(
              io.stdout,
              `events_out.${tested.subscription}: ${tested.url} answered HTTP ${tested.status} to event ${tested.eventId}.`,
            );
        },
      )
      .command(
        'failed',
        'List the events given up on, newest first: after 24 hours of failed attempts, or refused by the receiver',
        (y) =>
          y
            .option('json', jsonFlag('the undeliverable events (subscription, event_id, type, failed_at, attempts, error)'))
            .option('limit', {
              type: 'string',
              coerce: wholeNumber('--limit', { min: 1 }),
              describe: `Show at most this many events (default ${DEFAULT_FAILED_LIMIT})`,
            }),
        async (argv) => {
          const eventsApp = await app();
          const failed = await eventsApp.listFailedEvents.execute({ limit: argv.limit ?? DEFAULT_FAILED_LIMIT });
          if (argv.json) writeJson(io.stdout, failed.map(failedEventJson));
          else if (failed.length === 0) writeLine(io.stdout, 'No undeliverable events.');
          else
            writeLine(
              io.stdout,
              textTable(
                [`FAILED (${eventsApp.timeZone})`, 'SUBSCRIPTION', 'TYPE', 'EVENT ID', 'ATTEMPTS', 'ERROR'],
                failed.map((each) => [
                  wallClockWithSeconds(each.failedAt, eventsApp.timeZone),
                  each.subscription,
                  each.event.type,
                  each.event.id,
                  String(each.attempts),
                  each.error,
                ]),
              ),
            );
        },
      )
      .command(
        'resend [event-id]',
        'Put events given up on back in the outbox, with their own ids and 24 hours of attempts afresh; the gateway sends them',
        (y) =>
          y
            .positional('event-id', {
              type: 'string',
              coerce: argument('event-id'),
              describe: 'The event id (msg_…), as "agent events failed" lists it',
            })
            .option('all', { type: 'boolean', describe: 'Every event given up on (of --subscription, when given)' })
            .option('subscription', {
              type: 'string',
              coerce: argument('--subscription'),
              describe: 'Only the events of this events_out subscription',
            })
            .option('json', jsonFlag('the events put back (subscription, event_id)')),
        async (argv) => {
          const eventId = argv['event-id']?.trim() ?? '';
          if (argv.all && eventId !== '') throw new CliUsageError('Give either an event id or --all, not both.');
          if (!argv.all && eventId === '')
            throw new CliUsageError('Give the id of the event to resend (see "agent events failed"), or --all.');
          const resend = (await app()).resendFailedEvents;
          const subscription = argv.subscription ?? null;
          const resent = argv.all ? await resend.all({ subscription }) : await resend.one({ eventId, subscription });
          if (argv.json)
            writeJson(
              io.stdout,
              resent.map((each) => ({ subscription: each.subscription, event_id: each.eventId })),
            );
          else if (resent.length === 0) writeLine(io.stdout, 'No undeliverable events to resend.');
          else
            for (const each of resent)
              writeLine(io.stdout, `Event ${each.eventId} waits again for events_out.${each.subscription}; the gateway sends it.`);
        },
      )
      .demandCommand(1, MISSING_COMMAND),
  );
}
