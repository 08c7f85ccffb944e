import type { Argv } from 'yargs';
import type { ListChannels } from '../../application/delivery/ListChannels.js';
import type { ListPlatforms } from '../../application/delivery/ListPlatforms.js';
import type { RefreshChannelDirectory } from '../../application/delivery/RefreshChannelDirectory.js';
import type { SendMessage, SentMessage } from '../../application/delivery/SendMessage.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { CliError } from './CliError.js';
import { readAll, writeLine, type CliIO } from './CliIO.js';
import { CliUsageError } from './CliUsageError.js';
import { MISSING_COMMAND } from './commandLevel.js';
import { argument, text } from './flagValues.js';
import { channelsJson, platformsJson, sentJson } from './jsonViews.js';
import { textTable } from './textTable.js';

/** What the delivery commands need, built on first use by the composition root. */
export interface DeliveryApp {
  sendMessage: SendMessage;
  listPlatforms: ListPlatforms;
  listChannels: ListChannels;
  refreshChannelDirectory: RefreshChannelDirectory;
}

function confirmation({ target, receipt }: SentMessage): string {
  const resolved = target.endsWith(`:${receipt.chatId}`) || target.includes(`:${receipt.chatId}:`) ? '' : ` (${receipt.chatId})`;
  const ids = receipt.messageIds;
  const what = ids.length === 1 ? `message ${ids[0]}` : `${ids.length} parts, messages ${ids.join(', ')}`;
  return `Delivered to ${target}${resolved}: ${what}.`;
}

/** `agent send`, `agent platforms` and `agent channels list`: the delivery path by hand. */
export function registerDeliveryCommands(yargs: Argv, app: () => Promise<DeliveryApp>, io: CliIO): Argv {
  return yargs
    .command(
      'send <target> [text..]',
      "Deliver a message through the same path as a job's answer, and print what the platform confirmed",
      (y) =>
        y
          .positional('target', {
            type: 'string',
            demandOption: true,
            coerce: argument('target'),
            describe: 'e.g. telegram, telegram:<chat_id>, slack:#general, email:ops@example.com, all; several separated by commas',
          })
          .positional('text', { type: 'string', array: true, describe: 'The message; "-" (or nothing, on a pipe) reads it from stdin' })
          .option('json', { type: 'boolean', default: false, describe: 'Print the confirmations as JSON' })
          .example('$0 send telegram "Deploy finished"', 'to the home channel of telegram')
          .example('make test 2>&1 | $0 send slack:#ci -', "a command's output to a named channel"),
      async (argv) => {
        // yargs drops a lone "-", so "-" and no text at all both arrive as an empty list.
        const words = (argv.text ?? []).map(String).filter((word) => word !== '-');
        if (words.length === 0 && io.interactive) {
          throw new CliUsageError('Give the text to send, or pipe it in: echo "Deploy finished" | agent send telegram -');
        }
        const text = words.length === 0 ? await readAll(io.stdin) : words.join(' ');
        const sent = await (await app()).sendMessage.execute({ target: argv.target, text });
        if (argv.json) writeLine(io.stdout, JSON.stringify(sentJson(sent), null, 2));
        else for (const one of sent) writeLine(io.stdout, confirmation(one));
      },
    )
    .command(
      'platforms',
      'List the chat platforms: configured or which settings are missing, and the home channel',
      (y) => y.option('json', { type: 'boolean', default: false, describe: 'Print the statuses as JSON' }),
      async (argv) => {
        const statuses = (await app()).listPlatforms.execute();
        if (argv.json) {
          writeLine(io.stdout, JSON.stringify(platformsJson(statuses), null, 2));
          return;
        }
        const rows = statuses.map((status) => [
          status.platform,
          status.configured
            ? 'configured'
            : `missing ${status.missing.map((setting) => `${setting.key} (${setting.variable})`).join(', ')}`,
          status.homeChannel ?? '-',
        ]);
        writeLine(io.stdout, textTable(['PLATFORM', 'STATUS', 'HOME CHANNEL'], rows));
      },
    )
    .command('channels', 'The channel directory used for named targets such as slack:#general', (channels) =>
      channels
        .command(
          ['list', 'ls'],
          'Show the channels known by name: config aliases, then what the platforms listed',
          (y) =>
            y
              .option('refresh', {
                type: 'boolean',
                default: false,
                describe: 'Ask the platforms for their channels first (the gateway does so every 5 minutes)',
              })
              .option('platform', { type: 'string', coerce: text('--platform'), describe: 'Only this platform' })
              .option('json', { type: 'boolean', default: false, describe: 'Print the channels as JSON' }),
          async (argv) => {
            const delivery = await app();
            const known = delivery.listPlatforms.execute().map((status) => status.platform);
            if (argv.platform !== undefined && !known.includes(argv.platform)) {
              throw new CliUsageError(`--platform "${argv.platform}" is not a chat platform; use one of: ${known.join(', ')}.`);
            }
            const failed: string[] = [];
            if (argv.refresh) {
              const report = await delivery.refreshChannelDirectory.execute();
              for (const listing of report.listings) if ('error' in listing) failed.push(`${listing.platform} (${listing.error})`);
              if (report.listings.length === 0)
                writeLine(io.stderr, 'warning: no configured platform can list its channels (slack, discord, mattermost and matrix can).');
            }
            const list = await delivery.listChannels.execute({ platform: argv.platform });
            if (argv.json) writeLine(io.stdout, JSON.stringify(channelsJson(list), null, 2));
            else if (list.channels.length === 0) {
              writeLine(
                io.stdout,
                list.updatedAt === null
                  ? 'No channels known yet: run "agent channels list --refresh", or start the gateway.'
                  : 'No channels known.',
              );
            } else {
              const rows = list.channels.map((channel) => [
                channel.platform,
                `#${channel.name}`,
                channel.id,
                channel.source === 'config' ? 'config.yaml' : 'listed',
              ]);
              writeLine(io.stdout, textTable(['PLATFORM', 'NAME', 'ID', 'SOURCE'], rows));
              if (list.updatedAt !== null) writeLine(io.stdout, `\nListed at ${list.updatedAt}.`);
            }
            if (failed.length > 0) {
              throw new CliError(
                ERROR_CODES.DELIVERY.LISTING_FAILED,
                `Could not list the channels of ${failed.join('; ')}; the channels listed before are kept.`,
              );
            }
          },
        )
        .demandCommand(1, MISSING_COMMAND),
    );
}
