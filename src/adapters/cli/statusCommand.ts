import type { Argv } from 'yargs';
import type { HomeStatus, ShowStatus } from '../../application/status/ShowStatus.js';
import { formatWallClock } from '../../domain/zonedTime.js';
import { writeLine, type CliIO } from './CliIO.js';
import { statusJson } from './jsonViews.js';
import { textTable } from './textTable.js';
import type { SandboxStatus } from '../../application/ports/Sandbox.js';

/** What `agent status` needs, built on first use by the composition root. */
export interface StatusApp {
  showStatus: ShowStatus;
  home: string;
  timeZone: string;
  /** Whether children run in bubblewrap here (found by trying it). */
  sandbox: () => Promise<SandboxStatus>;
}

/** `agent status`: the state of this home at a glance, gateway or none. */
export function registerStatusCommand(yargs: Argv, app: () => Promise<StatusApp>, io: CliIO): Argv {
  return yargs.command(
    'status',
    'Show whether a gateway runs on this home, the next jobs due, failed and paused jobs and waiting webhook events',
    (y) => y.option('json', { type: 'boolean', default: false, describe: 'Print the status as JSON' }),
    async (argv) => {
      const { showStatus, home, timeZone, sandbox: sandboxStatus } = await app();
      const [status, sandbox] = await Promise.all([showStatus.execute(), sandboxStatus()]);
      if (argv.json) writeLine(io.stdout, JSON.stringify({ ...statusJson(home, status), sandbox }, null, 2));
      else writeLine(io.stdout, statusText(status, home, timeZone, { webhooks: true, sandbox }));
    },
  );
}

/**
 * The text of `agent status`, times in `timeZone`; without `webhooks` only its cron part (the
 * gateway, which fires the jobs, and the jobs), for `agent cron status`.
 */
export function statusText(
  status: HomeStatus,
  home: string,
  timeZone: string,
  parts: { webhooks: boolean; sandbox?: SandboxStatus } = { webhooks: true },
): string {
  const when = (iso: string) => `${formatWallClock(new Date(iso), timeZone)} (${timeZone})`;
  const lines = [`Home: ${home}`];
  const { gateway } = status;
  if (gateway.state === 'stopped') lines.push('Gateway: not running (start it with "agent gateway")');
  else {
    const { pid, host, startedAt, listener, provider } = gateway.gateway;
    const state = gateway.state === 'running' ? 'running' : `registered from ${host}, which cannot be checked from here`;
    lines.push(
      `Gateway: ${state}, pid ${pid}, since ${when(startedAt)}`,
      `  listener: ${listener ?? 'off'}`,
      `  trigger provider: ${provider}`,
    );
    for (const receiver of gateway.gateway.chatReceivers ?? []) {
      const why = receiver.state === 'down' && receiver.error ? ` — ${oneLine(receiver.error)}` : '';
      lines.push(`  chat receiver ${receiver.platform}: ${receiver.state} since ${when(receiver.since)}${why}`);
    }
  }
  if (parts.sandbox) lines.push(`Sandbox: ${sandboxLine(parts.sandbox)}`);
  if (status.replicas) {
    if (status.replicas.length === 0) lines.push('Gateways on the shared database: none');
    else {
      lines.push(`Gateways on the shared database (${status.replicas.length}):`);
      lines.push(
        indent(
          textTable(
            ['HOST', 'PID', `SINCE (${timeZone})`, 'LISTENER', 'PROVIDER', 'CHAT RECEIVERS'],
            status.replicas.map((replica) => [
              replica.host,
              String(replica.pid),
              formatWallClock(new Date(replica.startedAt), timeZone),
              replica.listener ?? 'off',
              replica.provider,
              (replica.chatReceivers ?? []).map((receiver) => `${receiver.platform} ${receiver.state}`).join(', ') || '-',
            ]),
          ),
        ),
      );
    }
  }
  lines.push('');
  if (status.nextJobs.length === 0) lines.push('Next jobs: none scheduled');
  else {
    lines.push('Next jobs:');
    lines.push(
      indent(
        textTable(
          ['ID', 'NAME', `NEXT RUN (${timeZone})`],
          status.nextJobs.map((job) => [job.id, job.name, formatWallClock(new Date(job.nextRunAt), timeZone)]),
        ),
      ),
    );
  }
  lines.push('');
  if (status.failedJobs.length === 0) lines.push('Failed jobs: none');
  else {
    lines.push('Failed jobs (last run):');
    for (const job of status.failedJobs) {
      const at = job.lastRunAt ? ` at ${when(job.lastRunAt)}` : '';
      lines.push(`  ${job.id} '${job.name}': ${job.lastStatus}${at}${job.error ? ` — ${oneLine(job.error)}` : ''}`);
    }
  }
  if (status.pausedJobs.length > 0) {
    lines.push('', 'Paused jobs:');
    for (const job of status.pausedJobs) {
      const since = job.pausedAt ? ` since ${when(job.pausedAt)}` : '';
      lines.push(`  ${job.id} '${job.name}'${since}${job.reason ? ` — ${job.reason}` : ''}`);
    }
  }
  if (parts.webhooks) {
    lines.push('');
    lines.push(`Webhook events waiting: ${status.webhookEventsWaiting}`);
  }
  if (status.unreadableJobs > 0) lines.push(`Unreadable job records: ${status.unreadableJobs} (see "agent cron list")`);
  return lines.join('\n');
}

/** The sandbox in a few words (docs/processes.md). */
function sandboxLine(sandbox: SandboxStatus): string {
  if (sandbox.active) return 'bwrap (pre-run scripts, terminal commands and command agent programs run in it)';
  if (sandbox.mode === 'off') return 'off (tools.sandbox: off)';
  const effect = sandbox.mode === 'bwrap' ? 'the gateway refuses to start and no child runs' : 'children run without one';
  return `none, ${effect}: ${sandbox.problem}`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
