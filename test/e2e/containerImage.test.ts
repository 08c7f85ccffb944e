import { spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { AGENT_EXECUTABLE, requireBuiltAgent } from './agentCli.js';
import { execFile, spawn } from '../support/testProcesses.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HEALTHCHECK = join(ROOT, 'docker', 'healthcheck.mjs');
const IMAGE = 'agent-gateway:e2e';
const run = promisify(execFile);

const firstLine = (text: string) => text.trim().split('\n')[0] ?? '';

/** Why the image cannot be built and run here, or null when a Docker daemon answers. */
function dockerUnavailable(): string | null {
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 30_000 });
  if (info.error) return `the docker CLI cannot be run (${(info.error as NodeJS.ErrnoException).code ?? info.error.message})`;
  if (info.status !== 0) return `no Docker daemon answers (${firstLine(info.stderr) || `docker info exited with ${info.status}`})`;
  return null;
}

/** Why hadolint cannot be run here, or null. */
function hadolintUnavailable(): string | null {
  const version = spawnSync('hadolint', ['--version'], { encoding: 'utf8' });
  if (version.error) return `hadolint is not installed (${(version.error as NodeJS.ErrnoException).code ?? version.error.message})`;
  return version.status === 0 ? null : `hadolint --version exited with ${version.status}`;
}

/** Runs `docker …` to its end and returns stdout; a non-zero exit throws with stderr. */
async function docker(...args: string[]): Promise<string> {
  const { stdout } = await run('docker', args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** Polls an async condition until it holds or the deadline passes. */
async function eventuallyAsync(condition: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function runHealthcheck(home: string): { code: number | null; stdout: string } {
  const result = spawnSync(process.execPath, [HEALTHCHECK], {
    env: { PATH: process.env.PATH, AGENT_HOME: home, AGENT_HEALTHCHECK_TIMEOUT_MS: '2000' },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout };
}

const listenerOn = (port: number) => `platforms:\n  webhook:\n    enabled: true\n    extra:\n      host: 127.0.0.1\n      port: ${port}\n`;

/** The image's HEALTHCHECK, run on this machine against a real gateway: the part that needs no Docker. */
describe("the image's health check (docker/healthcheck.mjs)", () => {
  let home: string;
  let gateway: ChildProcess | null = null;

  beforeAll(requireBuiltAgent);
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-healthcheck-'));
  });
  afterEach(async () => {
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGKILL');
      await once(gateway, 'exit');
    }
    gateway = null;
    await rm(home, { recursive: true, force: true });
  });

  it('reports healthy without asking anything when config.yaml leaves the listener off', () => {
    const check = runHealthcheck(home);

    expect(check.code).toBe(0);
    expect(check.stdout).toContain('its HTTP listener is off (platforms.webhook.enabled is not true)');
  });

  it('asks GET /health on the address config.yaml gives the listener', async () => {
    const port = await freePort();
    await writeFile(join(home, 'config.yaml'), listenerOn(port));
    gateway = spawn(process.execPath, [AGENT_EXECUTABLE, 'gateway'], {
      env: { PATH: process.env.PATH, AGENT_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    gateway.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    gateway.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    expect(await eventually(() => output.includes('webhook listening on'), 10_000)).toBe(true);

    const check = runHealthcheck(home);

    expect(check.code).toBe(0);
    expect(check.stdout).toBe(`healthy: http://127.0.0.1:${port}/health answered 200.\n`);
  });

  it('reports unhealthy when the listener config.yaml turns on does not answer', async () => {
    const port = await freePort();
    await writeFile(join(home, 'config.yaml'), listenerOn(port));

    const check = runHealthcheck(home);

    expect(check.code).toBe(1);
    expect(check.stdout).toBe(`unhealthy: http://127.0.0.1:${port}/health did not answer (ECONNREFUSED); see the container's log.\n`);
  });

  it('reports unhealthy, in one line, when config.yaml is not YAML', async () => {
    await writeFile(join(home, 'config.yaml'), ': [\n');

    const check = runHealthcheck(home);

    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/^unhealthy: .*config\.yaml cannot be read \(.+\); fix it and restart the container\.\n$/);
  });
});

describe('compose.yaml', () => {
  interface Service {
    build?: string;
    image?: string;
    profiles?: string[];
    volumes: unknown[];
    ports?: string[];
    environment?: Record<string, string>;
    depends_on?: unknown;
    stop_grace_period?: string;
  }
  // Compose reads YAML merge keys (`<<: *replica`); the default schema resolves them as it does.
  const compose = load(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
    services: Record<string, Service>;
    volumes: Record<string, unknown>;
  };

  it('runs the gateway with config.yaml mounted read-only over the home on a named volume', () => {
    const gateway = compose.services.gateway!;

    expect(gateway.build).toBe('.');
    expect(gateway.volumes).toContain('agent-home:/data');
    expect(gateway.volumes).toContainEqual(expect.objectContaining({ type: 'bind', target: '/data/config.yaml', read_only: true }));
    expect(Object.keys(compose.volumes)).toContain('agent-home');
    // `docker compose up` with no profile starts the single gateway on files and nothing else.
    expect(
      Object.entries(compose.services)
        .filter(([, service]) => !service.profiles)
        .map(([name]) => name),
    ).toEqual(['gateway']);
  });

  it('has a replicas profile: PostgreSQL, two gateways on it with a home each, and one port in front of both', () => {
    const replicas = Object.entries(compose.services).filter(([, service]) => service.profiles?.includes('replicas'));
    expect(replicas.map(([name]) => name).sort()).toEqual(['balancer', 'postgres', 'replica-a', 'replica-b']);

    const homes = new Set<unknown>();
    for (const name of ['replica-a', 'replica-b']) {
      const replica = compose.services[name]!;
      expect(replica.build).toBe('.');
      expect(replica.environment?.AGENT_DATABASE_URL).toMatch(/^postgres:\/\/agent:.*@postgres:5432\/agent$/);
      expect(replica.volumes).toContainEqual(expect.objectContaining({ target: '/data/config.yaml', read_only: true }));
      expect(replica.ports).toBeUndefined();
      homes.add(replica.volumes.find((volume) => typeof volume === 'string'));
    }
    expect(homes.size).toBe(2);

    const balancer = compose.services.balancer!;
    expect(balancer.ports).toEqual(['8644:8644']);
    const upstream = readFileSync(join(ROOT, 'docker', 'balancer.conf'), 'utf8');
    expect(upstream).toMatch(/server replica-a:8644/);
    expect(upstream).toMatch(/server replica-b:8644/);
    // A POST a replica received is never sent to the other as well.
    expect(upstream).toMatch(/proxy_next_upstream error;/);
  });
});

const lintSkip = hadolintUnavailable();
// Skipped only where hadolint is not installed (the reason is in the title): there is nothing to lint with then.
(lintSkip ? describe.skip : describe)(`the Dockerfile under hadolint${lintSkip ? ` (skipped: ${lintSkip})` : ''}`, () => {
  it('has no findings', () => {
    const lint = spawnSync('hadolint', [join(ROOT, 'Dockerfile')], { encoding: 'utf8' });

    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.status).toBe(0);
  });
});

const dockerSkip = dockerUnavailable();
// Skipped only where no Docker daemon answers (the reason is in the title): no image can be built or run then.
(dockerSkip ? describe.skip : describe)(`the container image${dockerSkip ? ` (skipped: ${dockerSkip})` : ''}`, () => {
  const containers: string[] = [];
  let configDir: string;

  beforeAll(async () => {
    await docker('build', '--tag', IMAGE, ROOT);
    configDir = await mkdtemp(join(tmpdir(), 'agent-image-'));
    await writeFile(join(configDir, 'config.yaml'), 'platforms:\n  webhook:\n    enabled: true\n');
  }, 15 * 60_000);

  afterAll(async () => {
    for (const name of containers) await docker('rm', '--force', '--volumes', name).catch(() => undefined);
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });

  /** Starts the image detached with a fast health check; returns the container's name. */
  async function startContainer(args: string[]): Promise<string> {
    const name = `agent-e2e-${process.pid}-${containers.length}`;
    containers.push(name);
    await docker('run', '--detach', '--name', name, '--health-interval', '1s', '--health-start-period', '30s', ...args, IMAGE);
    return name;
  }

  const healthOf = (name: string) => docker('inspect', '--format', '{{.State.Health.Status}}', name);

  it('starts as a non-root user, answers GET /health on the published port and turns healthy', async () => {
    const port = await freePort();
    const name = await startContainer([
      '--publish',
      `127.0.0.1:${port}:8644`,
      '--volume',
      `${join(configDir, 'config.yaml')}:/data/config.yaml:ro`,
    ]);

    const answered = await eventuallyAsync(async () => (await fetch(`http://127.0.0.1:${port}/health`)).status === 200, 60_000);
    expect({ answered, logs: answered ? '' : await docker('logs', name) }).toEqual({ answered: true, logs: '' });
    expect(await eventuallyAsync(async () => (await healthOf(name)) === 'healthy', 60_000)).toBe(true);
    expect(await docker('exec', name, 'id', '-u')).not.toBe('0');
    expect(await docker('exec', name, 'agent', 'cron', 'list')).toContain('No scheduled jobs');

    // SIGTERM reaches the gateway through tini: it stops as it does outside a container, exit 0.
    await docker('stop', '--time', '45', name);
    expect(await docker('inspect', '--format', '{{.State.ExitCode}}', name)).toBe('0');
    const logs = await docker('logs', name);
    expect(logs).toContain('SIGTERM received; stopping');
    expect(logs).toContain('gateway stopped');
  }, 180_000);

  it('turns healthy with the listener off, the default, on an empty home', async () => {
    const name = await startContainer([]);

    expect(await eventuallyAsync(async () => (await healthOf(name)) === 'healthy', 60_000)).toBe(true);
  }, 120_000);
});
