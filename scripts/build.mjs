// Bundles the CLI into dist/ with esbuild. One file per entry, with dynamic imports split into
// chunks, keeps start-up to what a command needs (docs/adr/0003-bundled-cli.md).
import { build } from 'esbuild';
import { chmod, readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

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

// Chunk names carry content hashes: start clean so stale chunks do not pile up.
await rm('dist', { recursive: true, force: true });
await build({
  entryPoints: { agent: 'src/composition/cli/agent.ts' },
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
  // A native addon finds its prebuilt binary beside its own files: it is loaded from node_modules.
  external: ['fs-native-extensions'],
  plugins: [lazyStringWidth],
});
await chmod('dist/agent.js', 0o755);
