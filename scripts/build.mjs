// Bundles the CLI into dist/ with esbuild. One file per entry, with dynamic imports split into
// chunks, keeps start-up to what a command needs (docs/adr/0003-bundled-cli.md).
import { build } from 'esbuild';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildVendorScript, vendoredFiles, vendorShims } from './vendorBundle.mjs';

const { version } = JSON.parse(await readFile('package.json', 'utf8'));

/**
 * Every import of `string-width` (yargs, cliui and wrap-ansi each have one) gets
 * scripts/lazyStringWidth.mjs instead, which loads the real package from node_modules only for
 * text that is not printable ASCII (see there for why).
 */
const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(build) {
    const shim = fileURLToPath(new URL('./lazyStringWidth.mjs', import.meta.url));
    build.onResolve({ filter: /^string-width$/ }, () => ({ path: shim }));
  },
};

/**
 * The dashboard's chart library (src/adapters/dashboard/chartLibrary.ts) inside the bundle: the
 * module becomes one that returns uPlot's script and style sheet as text, so that the gateway
 * serves them from dist/ without node_modules, and no page needs a CDN
 * (docs/adr/0019-bundled-chart-library.md).
 */
const inlineChartLibrary = {
  name: 'inline-chart-library',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]adapters[\\/]dashboard[\\/]chartLibrary\.ts$/ }, async () => {
      const [script, css] = await Promise.all([
        readFile('node_modules/uplot/dist/uPlot.iife.min.js', 'utf8'),
        readFile('node_modules/uplot/dist/uPlot.min.css', 'utf8'),
      ]);
      const files = JSON.stringify({ script, css });
      return { contents: `const files = ${files};\nexport function chartLibrary() { return files; }\n`, loader: 'js' };
    });
  },
};

/** The executable, its program (loaded once the signal handlers are in), and the module that imports the core. */
const ENTRY = 'src/composition/cli/agent.ts';
const MAIN = 'src/composition/cli/main.ts';
const CORE = 'agent-core';
/** The gateway's launcher: an entry of its own (dist/launcher.js) that imports node's modules only. */
const LAUNCHER = 'src/adapters/process/launcherMain.ts';

/** The options of both passes; `plugins` are added to the string-width one. */
const options = (plugins) => ({
  entryPoints: { agent: ENTRY, launcher: LAUNCHER },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  outExtension: { '.js': '.js' },
  chunkNames: 'chunks/[name]-[hash]',
  banner: {
    js: "import { createRequire as __agentCreateRequire } from 'node:module'; const require = __agentCreateRequire(import.meta.url);",
  },
  minify: process.env.AGENT_BUILD_MINIFY !== '0',
  keepNames: true,
  legalComments: 'linked',
  // `agent --version` without reading package.json at every start (src/composition/cli/agentVersion.ts).
  define: { __AGENT_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
  // The core's side-effect imports of packages that declare none are dropped, as they should be.
  logOverride: { 'ignored-bare-import': 'silent' },
  // A native addon finds its prebuilt binary beside its own files: it is loaded from node_modules.
  external: ['fs-native-extensions'],
  plugins: [inlineChartLibrary, lazyStringWidth, ...plugins],
});

/**
 * What every command loads: the modules main.ts reaches by static imports, found by a first pass
 * that writes nothing. esbuild puts modules into one chunk when the same set of entry points (the
 * executable and each module loaded lazily) reaches them; the core is reached by main and by
 * different lazy modules each, so it came out as ~45 small chunks, and loading a chunk costs
 * about as much as compiling 20 KB. `oneCoreChunk` has every module outside the core import a
 * module that imports the whole core: the core is then reached by all, and is one chunk.
 */
async function coreModules() {
  const { metafile } = await build({ ...options([]), write: false, metafile: true, minify: false, sourcemap: false });
  const outputs = metafile.outputs;
  const reached = (entryPoint) => {
    const inputs = new Set();
    const visited = new Set();
    const visit = (out) => {
      if (visited.has(out)) return;
      visited.add(out);
      for (const input of Object.keys(outputs[out].inputs)) inputs.add(input);
      for (const { kind, path } of outputs[out].imports) if (kind === 'import-statement' && outputs[path]) visit(path);
    };
    visit(Object.keys(outputs).find((out) => outputs[out].entryPoint === entryPoint));
    return inputs;
  };
  const core = reached(MAIN);
  // What the executable imports before main (the signal handlers) stays small and apart.
  const first = reached(ENTRY);
  // The launcher, a process of its own, loads what it imports and nothing more.
  const launcher = reached(LAUNCHER);
  for (const input of [...first, ...launcher, MAIN]) core.delete(input);
  // The vendored packages are a script of their own (scripts/vendorBundle.mjs).
  const vendor = vendoredFiles(metafile.inputs);
  for (const input of vendor.inside) core.delete(input);
  return {
    core,
    untouched: new Set([...core, ...first, ...launcher, MAIN]),
    loadedAlready: loadedAlready(metafile.inputs, core),
    vendored: vendor.files,
  };
}

/**
 * The dynamic imports of core modules, by importing file: [the specifier as written, the
 * namespace's name]. A module loaded lazily is an entry point of its own to esbuild, and what it
 * imports statically is then reached by one more entry point than the rest of the core: each such
 * module split the core again (15 chunks loaded before main ran). The core is loaded before any
 * of them runs, so these imports become static imports of the namespace (`oneCoreChunk`). Left
 * as they are: imports from a core module of a module that imports it back, which a static
 * import would turn into a cycle.
 */
function loadedAlready(inputs, core) {
  const staticallyReaches = (from, to) => {
    const seen = new Set();
    const pending = [from];
    while (pending.length > 0) {
      const input = pending.pop();
      if (input === to) return true;
      if (seen.has(input) || !inputs[input]) continue;
      seen.add(input);
      for (const { kind, path } of inputs[input].imports) if (kind === 'import-statement') pending.push(path);
    }
    return false;
  };
  const byImporter = new Map();
  for (const [importer, { imports }] of Object.entries(inputs)) {
    if (!importer.startsWith('src/')) continue;
    for (const { kind, path, original } of imports) {
      if (kind !== 'dynamic-import' || !core.has(path)) continue;
      if ((core.has(importer) || importer === MAIN) && staticallyReaches(path, importer)) continue;
      const rewrites = byImporter.get(importer) ?? [];
      if (!rewrites.some(([specifier]) => specifier === original)) rewrites.push([original, `__agentCoreModule${rewrites.length}`]);
      byImporter.set(importer, rewrites);
    }
  }
  return byImporter;
}

/** `source` with the dynamic imports of `rewrites` made static, on the lines they were on. */
function withCoreImportsStatic(source, rewrites) {
  let text = source;
  const added = [];
  for (const [specifier, name] of rewrites) {
    const quoted = specifier.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const call = new RegExp(`(?<!typeof\\s*)\\bimport\\(\\s*(['"])${quoted}\\1\\s*\\)`, 'g');
    const replaced = text.replace(call, `Promise.resolve(${name})`);
    if (replaced === text) continue;
    text = replaced;
    added.push(`import * as ${name} from '${specifier}';`);
  }
  return added.length === 0 ? null : `${text}\n${added.join(' ')}\n`;
}

function oneCoreChunk({ core, untouched, loadedAlready }) {
  const root = process.cwd();
  return {
    name: 'one-core-chunk',
    setup(context) {
      context.onResolve({ filter: new RegExp(`^${CORE}$`) }, () => ({ path: CORE, namespace: CORE }));
      context.onLoad({ filter: /.*/, namespace: CORE }, () => ({
        contents: [...core].map((input) => `import ${JSON.stringify(resolve(root, input))};`).join('\n'),
        resolveDir: root,
        loader: 'js',
      }));
      // Added last, so that line numbers and source maps stay as they were.
      context.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
        const input = relative(root, args.path);
        const rewrites = loadedAlready.get(input);
        // Main imports the module that imports the core too: otherwise that module alone is one more chunk.
        const joinsCore = !untouched.has(input) || input === MAIN;
        if (!rewrites && !joinsCore) return undefined;
        const source = await readFile(args.path, 'utf8');
        const text = (rewrites && withCoreImportsStatic(source, rewrites)) ?? source;
        return { contents: joinsCore ? `${text}\nimport '${CORE}';\n` : text, loader: 'ts' };
      });
    },
  };
}

const modules = await coreModules();
const { minify, target } = options([]);
const vendor = await buildVendorScript(
  modules.vendored.map((file) => resolve(file)),
  { plugins: [lazyStringWidth], minify, target },
);
// Chunk names carry content hashes: start clean so stale chunks do not pile up.
await rm('dist', { recursive: true, force: true });
await build(options([vendorShims(modules.vendored, vendor), oneCoreChunk(modules)]));
await writeFile(`dist/chunks/${vendor.name}`, vendor.text);
await chmod('dist/agent.js', 0o755);
