import { readFileSync } from 'node:fs';
// js-yaml rather than yaml: a third of the size and several times faster on a cold start, and a
// config file is read on every command (docs/adr/0003-bundled-cli.md).
import { CORE_SCHEMA, loadAll, YAMLException } from 'js-yaml';
import type * as z from 'zod/mini';
import { closestName } from '../../domain/didYouMean.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, errorText } from '../../domain/errors.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import { displayPath } from '../shared/displayPath.js';
import type { AgentConfig, LoadedConfig } from './AgentConfig.js';
import { ConfigError } from './ConfigError.js';
import { describeValue } from './describeValue.js';
import { agentConfigSchema, cronSchema } from './configSchema.js';

/**
 * Reads `$AGENT_HOME/config.yaml` once and returns it validated, with defaults filled in.
 *
 * - A missing file means every default; so does a path through a regular file (no config can be
 *   there, and whatever else uses that home names the real problem).
 * - A key written without a value (`timezone:`) counts as absent.
 * - A wrong value stops start-up with a ConfigError `CONFIG.INVALID` whose message names the file,
 *   the key path and what is expected; a YAML syntax error names the line and column.
 * - An unknown key (usually a typo) is ignored with a warning, so that a config written for a
 *   newer version still loads.
 * - An invalid `cron.script_timeout_seconds` is dropped with a warning: the script timeout
 *   comes from the next source instead (docs/configuration.md).
 *
 * It reads synchronously on purpose: every CLI command needs the config before doing anything
 * else, and there is nothing to overlap the read with.
 */
export class YamlConfigLoader {
  private loaded: LoadedConfig | null = null;

  /** @param configFile absolute path of config.yaml (AgentPaths.configFile) */
  constructor(private readonly configFile: string) {}

  /** The configuration; the file is read on the first call only. Throws ConfigError `CONFIG.*`. */
  load(): LoadedConfig {
    this.loaded ??= this.readAndValidate();
    return this.loaded;
  }

  /**
   * Everything wrong with the file, for the gateway's start-up check (startupChecks.ts), which
   * `agent config check` runs too: unreadable or invalid YAML, every wrong value and every unknown
   * key (with the known key it probably meant), each naming the file and the key. `config` is
   * what a command would run with (unknown keys ignored), or null when a wrong value would stop
   * it. Never throws for the file's content.
   */
  diagnose(): ConfigDiagnosis {
    const file = this.shownPath;
    let raw: unknown;
    try {
      const source = this.readSource();
      raw = withoutEmptyValues((source === null ? null : this.parseYaml(source)) ?? {});
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return { config: null, problems: [{ file, key: '', message: error.message, stops: true }] };
    }
    if (!isJsonObject(raw)) {
      return {
        config: null,
        problems: [
          {
            file,
            key: '',
            message: `${file} must hold a mapping of settings such as "cron:" and "model:" (got ${describeValue(raw)}).`,
            stops: true,
          },
        ],
      };
    }
    const warnings: string[] = [];
    this.dropInvalidScriptTimeout(raw, warnings);
    const problems: ConfigProblem[] = warnings.map((message) => ({ file, key: 'cron.script_timeout_seconds', message, stops: false }));
    const plugin = takePluginSection(raw);
    const result = agentConfigSchema.safeParse(raw);
    if (result.success) return { config: result.data, problems };
    let fatal = false;
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          problems.push({
            file,
            key: formatKeyPath([...issue.path, key]),
            message: `${this.unknownKey(issue.path, key)}; remove it or correct its spelling.`,
            stops: false,
          });
        }
      } else {
        fatal = true;
        problems.push({ file, key: formatKeyPath(keyPathOf(issue)), message: this.invalidValue(raw, issue).message, stops: true });
      }
    }
    problems.sort((a, b) => a.key.localeCompare(b.key));
    if (fatal) return { config: null, problems };
    const config = this.validate(raw, []);
    if (plugin) (config.cron as unknown as Record<string, unknown>)[plugin.name] = plugin.settings;
    return { config, problems };
  }

  /** `unknown key "timezon" (did you mean "timezone"?)`, prefixed with the file. */
  private unknownKey(path: readonly PropertyKey[], key: string): string {
    const suggestion = closestName(key, knownKeysAt(agentConfigSchema, path));
    const hint = suggestion === null ? '' : ` (did you mean "${suggestion}"?)`;
    return `${this.shownPath}: unknown key "${formatKeyPath([...path, key])}"${hint}`;
  }

  private get shownPath(): string {
    return displayPath(this.configFile);
  }

  private readAndValidate(): LoadedConfig {
    const source = this.readSource();
    const document = source === null ? null : this.parseYaml(source);
    const raw = withoutEmptyValues(document ?? {});
    if (!isJsonObject(raw)) {
      throw new ConfigError(
        ERROR_CODES.CONFIG.INVALID,
        `${this.shownPath} must hold a mapping of settings such as "cron:" and "model:" (got ${describeValue(raw)}).`,
      );
    }
    const warnings: string[] = [];
    this.dropInvalidScriptTimeout(raw, warnings);
    const plugin = takePluginSection(raw);
    const config = this.validate(raw, warnings);
    // The plugin's own settings (SchedulerContext.settings), as config.yaml has them: only the plugin knows their keys.
    if (plugin) (config.cron as unknown as Record<string, unknown>)[plugin.name] = plugin.settings;
    return { config, warnings };
  }

  private readSource(): string | null {
    try {
      return readFileSync(this.configFile, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      const reason = code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : String(code ?? error);
      throw new ConfigError(
        ERROR_CODES.CONFIG.UNREADABLE,
        `${this.shownPath} could not be read (${reason}); fix the file or its permissions and try again.`,
        { cause: error },
      );
    }
  }

  private parseYaml(source: string): unknown {
    try {
      // The core schema: YAML 1.2 values (an empty value is null), no dates or other surprises.
      // loadAll, because a file of only comments is an empty list of documents, not an error.
      const documents = loadAll(source, null, { filename: this.shownPath, schema: CORE_SCHEMA });
      if (documents.length > 1) {
        throw new ConfigError(
          ERROR_CODES.CONFIG.INVALID,
          `${this.shownPath} holds ${documents.length} YAML documents; keep one (remove the "---" lines).`,
        );
      }
      return documents[0] ?? null;
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (error instanceof YAMLException) {
        const where = error.mark ? ` at line ${error.mark.line + 1}, column ${error.mark.column + 1}` : '';
        throw new ConfigError(ERROR_CODES.CONFIG.INVALID, `${this.shownPath}: invalid YAML${where}: ${error.reason}.`, { cause: error });
      }
      throw new ConfigError(ERROR_CODES.CONFIG.INVALID, `${this.shownPath}: invalid YAML: ${errorText(error)}.`, { cause: error });
    }
  }

  private dropInvalidScriptTimeout(raw: Record<string, unknown>, warnings: string[]): void {
    const cron = raw.cron;
    if (!isJsonObject(cron) || !('script_timeout_seconds' in cron)) return;
    const value = cron.script_timeout_seconds;
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return;
    delete cron.script_timeout_seconds;
    warnings.push(
      `${this.shownPath}: cron.script_timeout_seconds must be a positive number of seconds ` +
        `(got ${describeValue(value)}); it is ignored and the next source is used.`,
    );
  }

  /**
   * Validates in two passes: the first finds wrong values (fatal) and unknown keys; the second
   * validates again without the unknown keys, so that they are ignored rather than kept.
   */
  private validate(raw: Record<string, unknown>, warnings: string[]): AgentConfig {
    const first = agentConfigSchema.safeParse(raw);
    if (first.success) return first.data;
    const unknownKeys = first.error.issues.filter((issue): issue is z.core.$ZodIssueUnrecognizedKeys => issue.code === 'unrecognized_keys');
    const wrongValue = first.error.issues.find((issue) => issue.code !== 'unrecognized_keys');
    if (wrongValue) throw this.invalidValue(raw, wrongValue);
    const unknownKeyWarnings: Array<{ keyPath: string; warning: string }> = [];
    for (const issue of unknownKeys) {
      const owner = valueAt(raw, issue.path);
      for (const key of issue.keys) {
        unknownKeyWarnings.push({ keyPath: formatKeyPath([...issue.path, key]), warning: `${this.unknownKey(issue.path, key)} ignored` });
        if (isJsonObject(owner)) delete owner[key];
      }
    }
    unknownKeyWarnings.sort((a, b) => (a.keyPath < b.keyPath ? -1 : a.keyPath > b.keyPath ? 1 : 0));
    for (const { warning } of unknownKeyWarnings) warnings.push(warning);
    const second = agentConfigSchema.safeParse(raw);
    if (second.success) return second.data;
    throw this.invalidValue(raw, second.error.issues[0]!);
  }

  private invalidValue(raw: unknown, issue: z.core.$ZodIssue): ConfigError {
    if (issue.code === 'invalid_key') {
      // A mapping's key that cannot be used (a route name): quoted in full, since it is what must change.
      const name = JSON.stringify(String(issue.path.at(-1)));
      return new ConfigError(
        ERROR_CODES.CONFIG.INVALID,
        `${this.shownPath}: ${formatKeyPath(keyPathOf(issue))} has the key ${name}, which ${issue.message}.`,
      );
    }
    const key = formatKeyPath(issue.path) || 'the top level';
    const found = looksSecret(issue.path) ? 'a value not shown here' : describeValue(valueAt(raw, issue.path));
    return new ConfigError(ERROR_CODES.CONFIG.INVALID, `${this.shownPath}: ${key} ${issue.message} (got ${found}).`);
  }
}

/** One thing wrong with config.yaml: the file as shown to the user, the key path ('' for the whole file), one sentence. */
export interface ConfigProblem {
  file: string;
  key: string;
  message: string;
  /** Whether it stops every command (a wrong value); false for what is ignored with a warning (a misspelt key). */
  stops: boolean;
}

export interface ConfigDiagnosis {
  config: AgentConfig | null;
  problems: ConfigProblem[];
}

interface SchemaDefinition {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDefinition } }>;
  innerType?: { _zod: { def: SchemaDefinition } };
  valueType?: { _zod: { def: SchemaDefinition } };
  element?: { _zod: { def: SchemaDefinition } };
  options?: Array<{ _zod: { def: SchemaDefinition } }>;
}

/**
 * The keys the schema knows in the mapping at `path`, read from the schema itself so the hints
 * cannot drift from it: through optional and default wrappers, a record's entries and a list's items.
 */
function knownKeysAt(schema: z.ZodMiniType, path: readonly PropertyKey[]): string[] {
  let definition = (schema as unknown as { _zod: { def: SchemaDefinition } })._zod.def;
  const unwrap = () => {
    while (definition.innerType) definition = definition.innerType._zod.def;
  };
  unwrap();
  for (const segment of path) {
    if (definition.type === 'object' && typeof segment === 'string' && definition.shape?.[segment]) {
      definition = definition.shape[segment]._zod.def;
    } else if (definition.type === 'record' && definition.valueType) {
      definition = definition.valueType._zod.def;
    } else if (definition.type === 'array' && definition.element) {
      definition = definition.element._zod.def;
    } else {
      return [];
    }
    unwrap();
  }
  return definition.type === 'object' && definition.shape ? Object.keys(definition.shape) : [];
}

/**
 * Takes `cron.<name>` out of `raw` when `cron.provider` names a plugin and that section is a
 * mapping, so the strict schema does not drop it as unknown (a plugin gets its `cron.<name>`
 * section, docs/plugins.md). A key of the cron section itself (`managed`, validated there) is left
 * alone, and so is a scalar: a misspelt key still gets its "unknown key" warning.
 */
function takePluginSection(raw: Record<string, unknown>): { name: string; settings: Record<string, unknown> } | null {
  const cron = raw.cron;
  if (!isJsonObject(cron) || typeof cron.provider !== 'string') return null;
  const name = cron.provider.trim();
  if (name === '' || Object.hasOwn(cronSchema.shape, name)) return null;
  const settings = Object.hasOwn(cron, name) ? cron[name] : undefined;
  if (!isJsonObject(settings)) return null;
  delete cron[name];
  return { name, settings };
}

/** A copy in which mapping entries without a value are gone, at every depth. */
function withoutEmptyValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEmptyValues);
  if (!isJsonObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (entry !== null && entry !== undefined) copy[key] = withoutEmptyValues(entry);
  }
  return copy;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

/** Where an issue is: the mapping itself for a key it refuses (the key is no path to a value). */
function keyPathOf(issue: z.core.$ZodIssue): readonly PropertyKey[] {
  return issue.code === 'invalid_key' ? issue.path.slice(0, -1) : issue.path;
}

/** `cron.managed.portal_url`, `fallback_providers[0].provider`. */
function formatKeyPath(path: readonly PropertyKey[]): string {
  return path
    .map((segment, index) => {
      if (typeof segment === 'number') return `[${segment}]`;
      return index === 0 ? String(segment) : `.${String(segment)}`;
    })
    .join('');
}

/** Values under such keys may be credentials: error messages end up in terminals and logs. */
function looksSecret(path: readonly PropertyKey[]): boolean {
  // api_key_env holds a variable's name, unless someone wrote the key itself there by mistake.
  return path.some((segment) => typeof segment === 'string' && /(api_keys?|api_key_env|secret|token|password)$/i.test(segment));
}
