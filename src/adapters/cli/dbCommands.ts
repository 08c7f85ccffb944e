import type { Argv } from 'yargs';
import { jsonFlag, writeJson, writeLine, type CliIO } from './CliIO.js';
import { MISSING_COMMAND } from './commandLevel.js';

export interface MigrationLine {
  version: number;
  name: string;
  applied_at: string | null;
}

export interface ImportReport {
  /** Jobs copied into the database. */
  imported: string[];
  /** Jobs the database holds already (by id): left as they are there. */
  present: string[];
  /** Jobs that could not be copied, one sentence each. */
  refused: string[];
  /** Webhook subscriptions: copied, held already (by name), and entries that could not be read. */
  subscriptions: { imported: string[]; present: string[]; refused: string[] };
}

/** What `agent db` needs: the configured database (`AGENT_DATABASE_URL` or `database.url`). */
export interface DbApp {
  /** `host:port/database`, never the password. */
  label: string;
  migrate(): Promise<Array<{ version: number; name: string }>>;
  migrations(): Promise<MigrationLine[]>;
  /** Copies the jobs and the webhook subscriptions of `$AGENT_HOME` into the database, keeping their ids and names. */
  importHome(): Promise<ImportReport>;
}

/** `agent db migrate|status|import`: the PostgreSQL job store (docs/scaling.md). */
export function registerDbCommands(yargs: Argv, app: () => Promise<DbApp>, io: CliIO): Argv {
  return yargs.command('db', 'Set up and fill the PostgreSQL job store (AGENT_DATABASE_URL or database.url)', (db) =>
    db
      .command(
        'migrate',
        'Apply the schema migrations the database does not have yet (agent gateway also does at start)',
        (y) => y.option('json', jsonFlag('the migrations applied (an empty list when it was up to date)')),
        async (argv) => {
          const database = await app();
          const applied = await database.migrate();
          if (argv.json) {
            writeJson(io.stdout, { database: database.label, applied: applied.map(({ version, name }) => ({ version, name })) });
            return;
          }
          if (applied.length === 0) writeLine(io.stdout, `The database ${database.label} is up to date.`);
          for (const migration of applied)
            writeLine(io.stdout, `Applied migration ${migration.version} (${migration.name}) to ${database.label}.`);
        },
      )
      .command(
        'status',
        'Say which schema migrations the database has',
        (y) => y.option('json', { type: 'boolean', default: false, describe: 'Print them as JSON' }),
        async (argv) => {
          const database = await app();
          const migrations = await database.migrations();
          if (argv.json) {
            writeLine(io.stdout, JSON.stringify({ database: database.label, migrations }, null, 2));
            return;
          }
          writeLine(io.stdout, `Database ${database.label}:`);
          for (const migration of migrations) {
            writeLine(
              io.stdout,
              `  ${String(migration.version).padStart(3)} ${migration.name.padEnd(20)} ${migration.applied_at ? `applied ${migration.applied_at}` : 'pending'}`,
            );
          }
          const pending = migrations.filter((migration) => migration.applied_at === null).length;
          if (pending > 0) writeLine(io.stdout, `${pending} pending: run "agent db migrate" or start agent gateway.`);
        },
      )
      .command(
        'import',
        'Copy the jobs and webhook subscriptions of $AGENT_HOME into the database, keeping ids and names; what it holds already is left as it is',
        (y) => y.option('json', { type: 'boolean', default: false, describe: 'Print the outcome as JSON' }),
        async (argv) => {
          const database = await app();
          await database.migrate();
          const report = await database.importHome();
          const { subscriptions } = report;
          if (argv.json) {
            writeLine(io.stdout, JSON.stringify({ database: database.label, ...report }, null, 2));
          } else {
            for (const refusal of [...report.refused, ...subscriptions.refused]) writeLine(io.stderr, refusal);
            writeLine(
              io.stdout,
              `Imported ${report.imported.length} job(s) into ${database.label}; ${report.present.length} were there already${report.refused.length > 0 ? `; ${report.refused.length} could not be imported` : ''}.`,
            );
            writeLine(
              io.stdout,
              `Imported ${subscriptions.imported.length} webhook subscription(s) into ${database.label}; ${subscriptions.present.length} were there already${subscriptions.refused.length > 0 ? `; ${subscriptions.refused.length} could not be imported` : ''}.`,
            );
          }
          if (report.refused.length + subscriptions.refused.length > 0) process.exitCode = 1;
        },
      )
      .demandCommand(1, MISSING_COMMAND),
  );
}
