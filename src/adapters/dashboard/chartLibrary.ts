import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** uPlot's script and style sheet, as the gateway serves them at /assets/uplot.js and /assets/uplot.css. */
export interface ChartLibraryFiles {
  script: string;
  css: string;
}

let files: ChartLibraryFiles | undefined;

/**
 * The chart library of the overview (uPlot, docs/adr/0019-bundled-chart-library.md), served by
 * the gateway itself, never from a CDN. The bundle holds both files as text: scripts/build.mjs
 * puts this module's body in its place; run from the sources (the tests) they are read from
 * node_modules the first time they are asked for.
 */
export function chartLibrary(): ChartLibraryFiles {
  if (files === undefined) {
    const require = createRequire(import.meta.url);
    files = {
      script: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
      css: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
    };
  }
  return files;
}
