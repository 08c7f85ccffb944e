// The vendored packages of the bundle (scripts/build.mjs): what every command loads of
// node_modules, built into one classic script, dist/chunks/vendor-<hash>.cjs, that
// scripts/vendorLoader.mjs compiles with V8's code cache. Every import of them in the rest of the
// bundle gets a small module that re-exports the script's exports instead, so there is one copy
// of each package, as before (docs/adr/0003-bundled-cli.md).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';

/**
 * Whole packages, used at every start. zod is not one of them: the config schema imports it as a
 * namespace (`import * as z`), which esbuild trims to what the schema uses; taken whole it would
 * be five times larger.
 */
const PACKAGES = ['yargs', 'inversify', 'js-yaml', 'croner', 'reflect-metadata', 'proper-lockfile'];
const IN_PACKAGE = new RegExp(`(^|/)node_modules/(${PACKAGES.join('|')})/`);
const SPECIFIER = new RegExp(`^(${PACKAGES.join('|')})(/.*)?$`);
const NAMESPACE = 'agent-vendor';
const LOADER = fileURLToPath(new URL('./vendorLoader.mjs', import.meta.url));

/**
 * The files of PACKAGES that the rest of the bundle imports, as a first pass's metafile `inputs`
 * has them (paths relative to the working directory), and every file that goes into the script
 * (`inside`: the packages and what they import), which the rest of the bundle no longer holds.
 */
export function vendoredFiles(inputs) {
  const inside = new Set(Object.keys(inputs).filter((input) => IN_PACKAGE.test(input)));
  const pending = [...inside];
  while (pending.length > 0)
    for (const { path, external } of inputs[pending.pop()]?.imports ?? [])
      if (!external && !inside.has(path)) {
        inside.add(path);
        pending.push(path);
      }
  const imported = new Set();
  for (const [importer, { imports }] of Object.entries(inputs))
    if (!inside.has(importer)) for (const { path, external } of imports) if (!external && IN_PACKAGE.test(path)) imported.add(path);
  // reflect-metadata first: inversify's decorators read the metadata it adds to Reflect.
  const files = [...imported].sort(
    (a, b) => Number(b.includes('/reflect-metadata/')) - Number(a.includes('/reflect-metadata/')) || a.localeCompare(b),
  );
  return { files, inside };
}

/**
 * Builds the script: the exports of `files` (absolute paths), by file. Returns its name in
 * dist/chunks, its text, and the names each file exports, found by running it here.
 */
export async function buildVendorScript(files, { plugins, minify, target }) {
  const result = await build({
    stdin: {
      contents: `${files.map((file, index) => `import * as v${index} from ${JSON.stringify(file)};`).join('\n')}\nexport const modules = [${files.map((_, index) => `v${index}`).join(', ')}];\n`,
      resolveDir: process.cwd(),
      loader: 'js',
    },
    write: false,
    outfile: 'vendor.cjs',
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target,
    minify,
    keepNames: true,
    legalComments: 'eof',
    // The script runs from dist/chunks, as the chunks that held these packages did.
    define: { 'import.meta.url': '__agentVendorUrl' },
    logLevel: 'warning',
    plugins,
  });
  const text = result.outputFiles[0].text;
  const name = `vendor-${createHash('sha256').update(text).digest('hex').slice(0, 12)}.cjs`;
  const url = pathToFileURL(resolve('dist/chunks', name)).href;
  const module = { exports: {} };
  vm.runInThisContext(`(function (exports, require, module, __agentVendorUrl) {${text}\n})`)(
    module.exports,
    createRequire(url),
    module,
    url,
  );
  return { name, text, exportNames: module.exports.modules.map((namespace) => Object.keys(namespace)) };
}

/**
 * Has every import of a vendored file load the re-exporting module instead (the metafile's
 * relative paths in `files`, the names from buildVendorScript), and tells the loader the script's
 * name.
 */
export function vendorShims(files, { name, exportNames }) {
  const root = process.cwd();
  const index = new Map(files.map((file, position) => [resolve(root, file), position]));
  return {
    name: 'vendor-shims',
    setup(context) {
      context.initialOptions.define = { ...context.initialOptions.define, __AGENT_VENDOR_FILE__: JSON.stringify(name) };
      context.onResolve({ filter: SPECIFIER }, async (args) => {
        if (args.pluginData?.vendorShims) return undefined;
        const { path, errors } = await context.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { vendorShims: true },
        });
        return errors.length === 0 && index.has(path) ? { path, namespace: NAMESPACE } : undefined;
      });
      context.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
        const position = index.get(args.path);
        const names = exportNames[position];
        const locals = names.map((exported, local) => [`v${local}`, exported]);
        return {
          contents: [
            `import { vendored } from ${JSON.stringify(LOADER)};`,
            `const { ${locals.map(([local, exported]) => `${JSON.stringify(exported)}: ${local}`).join(', ')} } = vendored().modules[${position}];`,
            `export { ${locals.map(([local, exported]) => `${local} as ${JSON.stringify(exported)}`).join(', ')} };`,
          ].join('\n'),
          resolveDir: root,
          loader: 'js',
        };
      });
    },
  };
}
