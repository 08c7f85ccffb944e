import type { Argv } from 'yargs';
import type { ListFailedEvents } from '../../application/events/ListFailedEvents.js';
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

/** `agent events test <name>` and `agent events failed`: the events out of `events_out` (docs/events.md). */
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
      .demandCommand(1, MISSING_COMMAND),
  );
}
