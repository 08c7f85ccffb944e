#!/usr/bin/env node
// The container image's HEALTHCHECK (docs/container.md). The gateway's only health endpoint is
// `GET /health` on its HTTP listener, and that listener is off unless config.yaml turns it on.
// So this reads the few keys that decide whether and where it listens, asks /health when it does,
// and otherwise reports healthy: the container's main process is the gateway, so while this runs
// the gateway is running. Exit 0 healthy, 1 unhealthy; one line on stdout either way (Docker keeps
// it in `docker inspect`).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { CORE_SCHEMA, load } from 'js-yaml';

const DEFAULT_HOST = '0.0.0.0';
const DEFAULT_PORT = 8644;
const TIMEOUT_MS = Number(process.env.AGENT_HEALTHCHECK_TIMEOUT_MS ?? 4000);

const home = resolve(process.env.AGENT_HOME?.trim() || join(homedir(), '.agent'));
const configFile = join(home, 'config.yaml');

function finish(healthy, line) {
  console.log(line);
  process.exit(healthy ? 0 : 1);
}

function readConfig() {
  let text;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch (error) {
    if (error?.code === 'ENOENT') return {};
    throw error;
  }
  const document = load(text, { schema: CORE_SCHEMA });
  return document !== null && typeof document === 'object' ? document : {};
}

const section = (value) => (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {});
const present = (value) => typeof value === 'string' && value.trim() !== '';

/** Whether the gateway starts its HTTP listener: webhooks on, or the managed trigger fully set up. */
function listenerIsOn(config) {
  if (section(section(config.platforms).webhook).enabled === true) return true;
  const cron = section(config.cron);
  if (typeof cron.provider !== 'string' || cron.provider.trim() !== 'managed') return false;
  const managed = section(cron.managed);
  return present(managed.portal_url) && present(managed.expected_audience) && present(managed.jwks_url);
}

/** Where to ask from inside the container: a wildcard bind answers on loopback. */
function healthUrl(config) {
  const extra = section(section(section(config.platforms).webhook).extra);
  const host = typeof extra.host === 'string' && extra.host.trim() !== '' ? extra.host.trim() : DEFAULT_HOST;
  const port = extra.port ?? DEFAULT_PORT;
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return { url: `http://${local.includes(':') ? `[${local}]` : local}:${port}/health`, port };
}

let config;
try {
  config = readConfig();
} catch (error) {
  finish(
    false,
    `unhealthy: ${configFile} cannot be read (${String(error?.message ?? error).split('\n')[0]}); fix it and restart the container.`,
  );
}

if (!listenerIsOn(config)) {
  finish(
    true,
    'healthy: the gateway is running; its HTTP listener is off (platforms.webhook.enabled is not true), so there is no /health to ask.',
  );
}

const { url, port } = healthUrl(config);
if (port === 0)
  finish(
    true,
    'healthy: the gateway is running; its listener has a random port (platforms.webhook.extra.port: 0), so there is no /health to ask.',
  );

try {
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (response.ok) finish(true, `healthy: ${url} answered ${response.status}.`);
  finish(false, `unhealthy: ${url} answered ${response.status}; see the container's log.`);
} catch (error) {
  const reason = error?.cause?.code ?? error?.name ?? String(error);
  finish(false, `unhealthy: ${url} did not answer (${reason}); see the container's log.`);
}
