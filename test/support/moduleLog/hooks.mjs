// The loader hooks of register.mjs: each module loaded, by URL, appended to AGENT_TEST_MODULE_LOG.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  if (process.env.AGENT_TEST_MODULE_LOG) appendFileSync(process.env.AGENT_TEST_MODULE_LOG, `${url}\n`);
  return nextLoad(url, context);
}
