#!/usr/bin/env node
/*
 * The `agent` executable's entry: as small as a module can be, so that for `agent gateway` the
 * stop-signal handlers are in place as soon as Node runs any of our code. The program itself
 * (yargs, every command) is loaded after them; a SIGTERM while it loads is a stop like any other.
 */
import './stopSignal.js';

await import('./main.js');
