import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SchedulerContext, SchedulerProvider } from '../../application/ports/SchedulerProvider.js';
import { errorText } from '../../domain/errors.js';

/** Where named providers are looked for (docs/plugins.md), in this order. */
export interface ProviderPlaces {
  /** The installed package's directory (dist/agent.js's parent's parent): `plugins/cron_providers/<name>/`. */
  installationDir: string;
  /** `$AGENT_HOME`: `plugins/<name>/`. */
  agentHome: string;
}

/** A provider ready to use, or the one reason it cannot be used. */
export type ProviderLoad = { provider: SchedulerProvider; reason?: undefined } | { provider?: undefined; reason: string };

/** What a plugin module exports. */
type ProviderFactory = (context: SchedulerContext) => SchedulerProvider;

/** A plugin name is one path segment: `managed`, `my-scheduler`. */
const PLUGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The directories a provider named `name` may live in, in the order they are tried. */
export function providerDirectories(name: string, places: ProviderPlaces): string[] {
  return [join(places.installationDir, 'plugins', 'cron_providers', name), join(places.agentHome, 'plugins', name)];
}

/**
 * Finds, imports and creates the provider `name`, and asks it whether it can work here. Never
 * throws: every way it can be unusable (no directory, no entry point, an import that fails, no
 * `createSchedulerProvider`, a factory that throws, `problem()` not null) comes back as a reason.
 */
export async function loadSchedulerProvider(name: string, places: ProviderPlaces, context: SchedulerContext): Promise<ProviderLoad> {
  if (!PLUGIN_NAME.test(name) || name.includes('..')) return { reason: 'it is not a plugin name (letters, digits, ".", "_" and "-" only)' };
  const directories = providerDirectories(name, places);
  // The first directory that holds an entry point wins; one without (an empty folder) is passed over.
  let entry: string | null = null;
  const withoutEntry: string[] = [];
  for (const candidate of directories) {
    if (!(await isA(candidate, 'directory'))) continue;
    entry = await entryPointOf(candidate);
    if (entry) break;
    withoutEntry.push(candidate);
  }
  if (!entry && withoutEntry.length === 0) return { reason: `no plugin directory was found (looked for ${directories.join(' and ')})` };
  if (!entry)
    return {
      reason: `${withoutEntry.join(' and ')} ${withoutEntry.length > 1 ? 'have' : 'has'} no entry point (package.json "exports" or "main", index.js or index.mjs)`,
    };
  let module: { createSchedulerProvider?: unknown };
  try {
    module = (await import(pathToFileURL(entry).href)) as { createSchedulerProvider?: unknown };
  } catch (error) {
    return { reason: `${entry} could not be loaded (${errorText(error)})` };
  }
  if (typeof module.createSchedulerProvider !== 'function') {
    return { reason: `${entry} does not export a function createSchedulerProvider(context)` };
  }
  let provider: unknown;
  try {
    provider = await (module.createSchedulerProvider as ProviderFactory)(context);
  } catch (error) {
    return { reason: `its createSchedulerProvider(context) threw (${errorText(error)})` };
  }
  if (!isProvider(provider)) {
    return { reason: 'its createSchedulerProvider(context) returned no provider (an object with problem, start, stop and jobsChanged)' };
  }
  let problem: string | null;
  try {
    problem = provider.problem();
  } catch (error) {
    return { reason: `its problem() threw (${errorText(error)})` };
  }
  if (problem !== null) return { reason: problem };
  return { provider };
}

export interface ProviderChoice {
  /** `cron.provider`; empty or absent selects the built-in ticker. */
  name: string | undefined;
  places: ProviderPlaces;
  context: SchedulerContext;
  /** Makes the built-in ticker, the fallback that always exists. */
  builtIn: () => SchedulerProvider;
}

/** The sentence logged when a named provider cannot be used. */
export function fallbackWarning(name: string, reason: string): string {
  return `cron.provider "${name}" cannot be used: ${reason.replace(/\.$/, '')}; the built-in ticker fires jobs instead — fix that and restart the gateway.`;
}

/**
 * The gateway's provider: the named one, loaded and started, or — when it is unusable in any way,
 * its `start` throwing included — the built-in ticker, started, with one warning naming the reason.
 */
export async function startSchedulerProvider(choice: ProviderChoice): Promise<SchedulerProvider> {
  const name = choice.name?.trim();
  if (name) {
    const loaded = await loadSchedulerProvider(name, choice.places, choice.context);
    if (loaded.provider) {
      try {
        await loaded.provider.start(choice.context);
        return loaded.provider;
      } catch (error) {
        await loaded.provider.stop().catch(() => undefined);
        choice.context.log.warn(fallbackWarning(name, `its start failed (${errorText(error)})`));
      }
    } else {
      choice.context.log.warn(fallbackWarning(name, loaded.reason));
    }
  }
  const builtIn = choice.builtIn();
  await builtIn.start(choice.context);
  return builtIn;
}

/**
 * The provider a command that changes jobs tells about its changes (`jobsChanged`), not started:
 * the named one, or null when none is named or it is unusable (then one warning names the reason).
 */
export async function providerToNotify(choice: Omit<ProviderChoice, 'builtIn'>): Promise<SchedulerProvider | null> {
  const name = choice.name?.trim();
  if (!name) return null;
  const loaded = await loadSchedulerProvider(name, choice.places, choice.context);
  if (loaded.provider) return loaded.provider;
  choice.context.log.warn(fallbackWarning(name, loaded.reason));
  return null;
}

/** Whether `path` is a directory, or a regular file; false when it is missing or cannot be read. */
async function isA(path: string, kind: 'directory' | 'file'): Promise<boolean> {
  try {
    const stats = await stat(path);
    return kind === 'directory' ? stats.isDirectory() : stats.isFile();
  } catch {
    return false;
  }
}

/** `package.json` `exports` (a string, or `.` with `import` or `default`), then `main`, then index.js, index.mjs. */
async function entryPointOf(directory: string): Promise<string | null> {
  const manifest = await readManifest(directory);
  const declared = manifest ? declaredEntry(manifest) : null;
  if (declared) {
    const path = join(directory, declared);
    return (await isA(path, 'file')) ? path : null;
  }
  for (const name of ['index.js', 'index.mjs']) {
    const path = join(directory, name);
    if (await isA(path, 'file')) return path;
  }
  return null;
}

async function readManifest(directory: string): Promise<Record<string, unknown> | null> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(directory, 'package.json'), 'utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function declaredEntry(manifest: Record<string, unknown>): string | null {
  const fromExports = exportTarget(manifest.exports);
  if (fromExports) return fromExports;
  return typeof manifest.main === 'string' && manifest.main !== '' ? manifest.main : null;
}

function exportTarget(exports: unknown, depth = 0): string | null {
  if (typeof exports === 'string') return exports;
  if (exports === null || typeof exports !== 'object' || Array.isArray(exports) || depth > 3) return null;
  const conditions = exports as Record<string, unknown>;
  for (const key of ['.', 'import', 'node', 'default']) {
    if (key in conditions) {
      const target = exportTarget(conditions[key], depth + 1);
      if (target) return target;
    }
  }
  return null;
}

function isProvider(value: unknown): value is SchedulerProvider {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Record<string, unknown>;
  return ['problem', 'start', 'stop', 'jobsChanged'].every((method) => typeof candidate[method] === 'function');
}
