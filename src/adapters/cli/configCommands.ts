import type { Argv } from 'yargs';
import type { JobCheckReport } from '../../application/cron/CheckJobs.js';
import type { CredentialCheck } from '../../application/delivery/CheckPlatformCredentials.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { CliError } from './CliError.js';
import { writeLine, type CliIO } from './CliIO.js';
import { MISSING_COMMAND } from './commandLevel.js';

/**
 * One finding of the gateway's start-up check: `refused` stops the gateway, `ignored` is left out
 * by it with a warning, `notice` is worth knowing (no config.yaml). The first two are problems here.
 */
export interface StartupFindingView {
  effect: 'refused' | 'ignored' | 'notice';
  key: string;
  message: string;
}

/** What `agent config check` needs; the jobs and credentials are only asked for when config.yaml can be used. */
export interface ConfigCheckApp {
  /**
   * The checks `agent gateway` runs at start-up, contacting nobody; `usable` is false when
   * config.yaml is too wrong for anything past it to be checked.
   */
  checkStartup(): Promise<{ findings: StartupFindingView[]; usable: boolean }>;
  checkJobs(): Promise<JobCheckReport>;
  checkCredentials(): Promise<CredentialCheck[]>;
}

interface CheckReport {
  config: StartupFindingView[];
  /** null when config.yaml is too wrong for the jobs to be checked. */
  jobs: JobCheckReport | null;
  /** null without --online, or when config.yaml is too wrong to read the platforms. */
  credentials: CredentialCheck[] | null;
  problems: number;
}

const isProblem = (finding: StartupFindingView) => finding.effect !== 'notice';

function countProblems(report: Omit<CheckReport, 'problems'>): number {
  const jobs = report.jobs ? report.jobs.jobs.filter((job) => job.problems.length > 0).length + report.jobs.unreadable.length : 0;
  const credentials = (report.credentials ?? []).filter((check) => check.result === 'failed').length;
  return report.config.filter(isProblem).length + jobs + credentials;
}

function summary(report: CheckReport, online: boolean): string {
  const problems = report.config.filter(isProblem).length;
  const missing = report.config.some((finding) => finding.effect === 'notice');
  const parts: string[] = [
    `config.yaml ${problems > 0 ? `${problems} problem${problems === 1 ? '' : 's'}` : missing ? 'not found (every setting has its default)' : 'ok'}`,
  ];
  if (report.jobs) {
    const bad = report.jobs.jobs.filter((job) => job.problems.length > 0).length + report.jobs.unreadable.length;
    parts.push(
      `${report.jobs.jobs.length} job${report.jobs.jobs.length === 1 ? '' : 's'} checked${bad > 0 ? `, ${bad} with problems` : ''}`,
    );
  } else {
    parts.push('jobs not checked (fix config.yaml first)');
  }
  if (report.credentials) {
    const failed = report.credentials.filter((check) => check.result === 'failed').length;
    parts.push(
      `${report.credentials.length} credential check${report.credentials.length === 1 ? '' : 's'}${failed > 0 ? `, ${failed} failed` : ''}`,
    );
  } else if (!online) {
    parts.push('credentials not contacted (add --online)');
  }
  return parts.join('; ');
}

const MARK = { ok: 'ok', failed: 'FAILED', unchecked: 'not checked' } as const;

/** `agent config check`: whether config.yaml and every job can be used as they stand. */
export function registerConfigCommands(yargs: Argv, app: () => Promise<ConfigCheckApp>, io: CliIO): Argv {
  return yargs.command('config', 'Check the configuration', (config) =>
    config
      .command(
        'check',
        'Run the checks "agent gateway" runs at start-up (config.yaml\'s values and keys, webhook routes, metrics, platform settings, the cron provider), then check that every job\'s provider, model, skills, script and targets resolve; exit 1 when something is wrong',
        (y) =>
          y
            .option('online', {
              type: 'boolean',
              default: false,
              describe: 'Also ask each configured platform who its credentials belong to, and gh for repo_comment routes',
            })
            .option('json', { type: 'boolean', default: false, describe: 'Print the findings as JSON' }),
        async (argv) => {
          const checker = await app();
          const startup = await checker.checkStartup();
          const usable = startup.usable;
          const jobs = usable ? await checker.checkJobs() : null;
          const credentials = usable && argv.online ? await checker.checkCredentials() : null;
          const partial = { config: startup.findings, jobs, credentials };
          const report: CheckReport = { ...partial, problems: countProblems(partial) };
          if (argv.json) {
            writeLine(io.stdout, JSON.stringify(report, null, 2));
          } else {
            for (const finding of report.config) {
              if (isProblem(finding)) writeLine(io.stdout, finding.message);
              else writeLine(io.stderr, `warning: ${finding.message}`);
            }
            for (const job of jobs?.jobs ?? []) {
              for (const problem of job.problems) writeLine(io.stdout, `job '${job.name}' (${job.id}): ${problem}`);
            }
            for (const line of jobs?.unreadable ?? []) writeLine(io.stdout, line);
            for (const check of credentials ?? []) writeLine(io.stdout, `${check.name}: ${MARK[check.result]}, ${check.detail}`);
          }
          const line = summary(report, argv.online);
          if (report.problems > 0) {
            throw new CliError(
              ERROR_CODES.CONFIG.CHECK_FAILED,
              `${report.problems} problem${report.problems === 1 ? '' : 's'} found (${line}); fix them and run "agent config check" again.`,
            );
          }
          if (!argv.json) writeLine(io.stdout, `No problems found: ${line}.`);
        },
      )
      .demandCommand(1, MISSING_COMMAND),
  );
}
