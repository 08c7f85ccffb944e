// Bundles one TypeScript bench entry (bench/<name>.ts) into `outfile`, so a bench process loads
// the project's code the way the CLI bundle does: one ESM file, packages from node_modules.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const fromCheckout = createRequire(import.meta.url);
/** Native addons stay outside the bundle, loaded from this checkout by absolute path (the bundle lives in a temporary directory). */
const nativeFromCheckout = {
  name: 'native-from-checkout',
  setup(context) {
    context.onResolve({ filter: /^fs-native-extensions$/ }, (args) => ({ path: fromCheckout.resolve(args.path), external: true }));
  },
};

export async function bundleBenchEntry(name, outfile) {
  await build({
    entryPoints: [join(root, 'bench', `${name}.ts`)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    nodePaths: [join(root, 'node_modules')],
    plugins: [nativeFromCheckout],
    logLevel: 'warning',
  });
  return outfile;
}
