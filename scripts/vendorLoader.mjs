// Loads dist/chunks/vendor-<hash>.cjs, the packages every command loads (yargs, inversify, js-yaml,
// croner, reflect-metadata, proper-lockfile; scripts/vendorBundle.mjs), as one classic script
// compiled with V8's code cache. Node 20 has no compile cache for ES modules
// (module.enableCompileCache came with Node 22), but vm.Script takes cached data: compiling
// these ~340 KB took ~7 ms of `agent cron list`, from the cache it takes ~1 ms, and the
// functions the command ran come compiled too (docs/adr/0003-bundled-cli.md). The cache holds
// compiled code of this file only, no data.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

/* global __AGENT_VENDOR_FILE__ */
const NAME = __AGENT_VENDOR_FILE__;

/** The checksum the cache starts with: V8 checks a cache's header only, and a damaged body crashes the process. */
const digest = (data) => createHash('sha256').update(data).digest();
const DIGEST_BYTES = 32;
const STALE_CACHE_MS = 7 * 24 * 3600 * 1000;

/**
 * Where the cache lives: the user's cache directory ($XDG_CACHE_HOME, else ~/.cache), as it can
 * be rebuilt at any time. One file per bundle, Node version and Node options (V8 refuses a cache
 * made under other flags), so that two installations, or the gateway and the command line started
 * with different options, do not overwrite each other's.
 */
function cacheFile() {
  const base =
    process.env.XDG_CACHE_HOME && isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : join(homedir(), '.cache');
  const options = digest(Buffer.from([...process.execArgv, process.env.NODE_OPTIONS ?? ''].join('\0')))
    .toString('hex')
    .slice(0, 8);
  return join(base, 'agent', 'code-cache', `${NAME}-${process.version}-${process.arch}-${options}.bin`);
}

/**
 * Written once the command is done, so that what it compiled on the way is in it too. Never
 * throws: a cache that cannot be written (read-only home, no home) only means the next start
 * compiles again. Written beside and renamed, so a reader never sees half a file; caches of
 * other bundles (an earlier version's) and files left half-written, a week old, are removed.
 */
function saveCache(script, file) {
  try {
    const dir = join(file, '..');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const partial = `${file}.${process.pid}.tmp`;
    const data = script.createCachedData();
    writeFileSync(partial, Buffer.concat([digest(data), data]), { mode: 0o600 });
    renameSync(partial, file);
    const weekAgo = Date.now() - STALE_CACHE_MS;
    for (const entry of readdirSync(dir)) {
      const other = join(dir, entry);
      if (entry.startsWith('vendor-') && (!entry.startsWith(`${NAME}-`) || entry.endsWith('.tmp')) && statSync(other).mtimeMs < weekAgo)
        rmSync(other, { force: true });
    }
  } catch {
    // See above: the cache is an optimisation only.
  }
}

/** The cache's V8 data, or undefined when there is none or it is not what was written. */
function readCache(file) {
  let content;
  try {
    content = readFileSync(file);
  } catch {
    return undefined;
  }
  const data = content.subarray(DIGEST_BYTES);
  return content.length > DIGEST_BYTES && digest(data).equals(content.subarray(0, DIGEST_BYTES)) ? data : undefined;
}

let loaded = null;

/** The vendored packages' exports by import specifier, the script run on the first call. */
export function vendored() {
  if (loaded) return loaded;
  const url = new URL(`./${NAME}`, import.meta.url);
  const file = fileURLToPath(url);
  // The wrapper stays on the script's first line: line numbers are the file's own.
  const source = `(function (exports, require, module, __agentVendorUrl) {${readFileSync(file, 'utf8')}\n})`;
  const cache = cacheFile();
  const cachedData = readCache(cache);
  const script = new vm.Script(source, {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  // Missing, or made by another V8 (which refuses it): made anew when this process ends.
  if (cachedData === undefined || script.cachedDataRejected) process.once('exit', () => saveCache(script, cache));
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(url), module, url.href);
  loaded = module.exports;
  return loaded;
}
