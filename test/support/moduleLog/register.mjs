// `node --import` this file to have every module the process loads written, a URL a line, to
// the file named by AGENT_TEST_MODULE_LOG (test/e2e/lazyModules.test.ts).
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
