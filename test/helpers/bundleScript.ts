import { join, parse } from 'node:path';
import { build } from 'esbuild';

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
  });
  return outfile;
}
