import { createRequire } from 'node:module';
import { join, parse } from 'node:path';
import { build, type Plugin } from 'esbuild';

/**
 * Native addons stay outside the bundle, loaded from this checkout's node_modules by absolute
 * path: the bundle is written to a temporary directory, from where a bare name would not resolve.
 */
const NATIVE_PACKAGES = ['fs-native-extensions'];
const fromCheckout = createRequire(import.meta.url);
const nativeFromCheckout: Plugin = {
  name: 'native-from-checkout',
  setup(build) {
    const filter = new RegExp(`^(${NATIVE_PACKAGES.join('|')})$`);
    build.onResolve({ filter }, (args) => ({ path: fromCheckout.resolve(args.path), external: true }));
  },
};

/**
 * Bundles a TypeScript entry (and the adapters it imports) into one ESM file that plain `node`
 * can run in a child process, so cross-process tests exercise the real adapter code. CommonJS
 * dependencies such as proper-lockfile call `require`, which ESM lacks: the banner supplies it.
 */
export async function bundleScript(entry: string, outDir: string): Promise<string> {
  const outfile = join(outDir, `${parse(entry).name}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'silent',
    plugins: [nativeFromCheckout],
  });
  return outfile;
}
