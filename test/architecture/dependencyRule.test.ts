import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The one rule of docs/architecture.md, checked mechanically: dependencies point inwards.
 * domain imports only itself (plus the pure libraries allowed below); application imports only
 * domain and itself; adapters never import the composition root; only composition wires
 * concrete adapters into the use cases.
 */
const SRC = resolve('src');

/** Pure, I/O-free libraries the domain may use; see docs/adr/0001-architecture.md. */
const DOMAIN_PACKAGES = ['croner'];
/** The application layer uses inversify only for its decorators and token types. */
const APPLICATION_PACKAGES = ['inversify'];

interface ImportSite {
  file: string;
  specifier: string;
  typeOnly: boolean;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): ImportSite[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((match) => ({
    file,
    specifier: (match[3] ?? match[4])!,
    typeOnly: Boolean(match[2]),
  }));
}

function layerOf(path: string, root = SRC): string {
  return relative(root, path).split(/[\\/]/)[0]!;
}

type Allowed = (site: ImportSite, targetLayer: string | null) => boolean;

function violations(layer: string, allowed: Allowed, root = SRC): string[] {
  return sourceFiles(join(root, layer)).flatMap((file) =>
    importsOf(file)
      .filter((site) => {
        const target = site.specifier.startsWith('.') ? layerOf(resolve(dirname(file), site.specifier), root) : null;
        return !allowed(site, target);
      })
      .map((site) => `${relative(root, site.file)} imports ${site.specifier}`),
  );
}

const domainRule: Allowed = (site, target) =>
  target === null ? DOMAIN_PACKAGES.includes(packageName(site.specifier)) : target === 'domain';

const packageName = (specifier: string) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;

describe('the dependency rule', () => {
  it('domain imports nothing outside itself but pure libraries', () => {
    expect(violations('domain', domainRule)).toEqual([]);
  });

  it('application imports only domain and itself (Node built-ins as types only)', () => {
    expect(
      violations('application', (site, target) => {
        if (target !== null) return target === 'domain' || target === 'application';
        if (site.specifier.startsWith('node:')) return site.typeOnly;
        return APPLICATION_PACKAGES.includes(packageName(site.specifier));
      }),
    ).toEqual([]);
  });

  it('adapters never import the composition root', () => {
    expect(violations('adapters', (_site, target) => target !== 'composition')).toEqual([]);
  });

  describe('the agent runtime, a hexagon of its own', () => {
    /** Where a relative import lands, as `layer/area` (`application/agent`), or null for a package. */
    const areaOf = (site: ImportSite): string | null =>
      site.specifier.startsWith('.')
        ? relative(SRC, resolve(dirname(site.file), site.specifier))
            .split(/[\\/]/)
            .slice(0, 2)
            .join('/')
        : null;
    const importsIn = (path: string) => sourceFiles(join(SRC, path)).flatMap(importsOf);
    const RUNTIME = ['domain/agent', 'application/agent'];

    it('its domain and application layers import neither jobs nor webhooks nor delivery', () => {
      const outside = RUNTIME.flatMap(importsIn).filter((site) => {
        const area = areaOf(site);
        return area !== null && /^application\/(cron|webhook|delivery|chat|status)$/.test(area);
      });
      expect(outside.map((site) => `${relative(SRC, site.file)} imports ${site.specifier}`)).toEqual([]);
    });

    it('the job, webhook, delivery and chat code see it only through the AgentRunner port', () => {
      const inside = [
        'application/cron',
        'application/webhook',
        'application/delivery',
        'application/chat',
        'application/status',
        'application/ports',
      ]
        .flatMap(importsIn)
        .filter((site) => RUNTIME.includes(areaOf(site) ?? ''));
      expect(inside.map((site) => `${relative(SRC, site.file)} imports ${site.specifier}`)).toEqual([]);
    });

    it('only its own adapters and the composition reach into it', () => {
      const runtimeAdapters = ['adapters/agents', 'adapters/tools', 'adapters/mcp'];
      const reaching = sourceFiles(join(SRC, 'adapters'))
        .filter((file) => !runtimeAdapters.some((area) => relative(SRC, file).startsWith(`${area}/`)))
        .flatMap(importsOf)
        .filter((site) => RUNTIME.includes(areaOf(site) ?? ''));
      expect(reaching.map((site) => `${relative(SRC, site.file)} imports ${site.specifier}`)).toEqual([]);
    });
  });

  it('reports a domain file that imports an adapter or a Node built-in', () => {
    const root = mkdtempSync(join(tmpdir(), 'agent-deps-'));
    mkdirSync(join(root, 'domain'));
    writeFileSync(
      join(root, 'domain', 'Bad.ts'),
      "import { readFile } from 'node:fs/promises';\nimport type { X } from '../adapters/x.js';\nimport { ok } from './ok.js';\n",
    );
    expect(violations('domain', domainRule, root)).toEqual([
      'domain/Bad.ts imports node:fs/promises',
      'domain/Bad.ts imports ../adapters/x.js',
    ]);
  });
});
