// The gateway's webhook listener on a scratch home with the agent replaced by a no-op runner:
// the full accept path (routing, size, HMAC, rate limit, parsing, idempotency, the synced
// inbox write, the worker) with nothing behind it, logging as `agent gateway` does by default
// (winston, text, info level, to stdout, which bench/webhook.mjs points at a file). Run by
// bench/webhook.mjs; argv: <AGENT_HOME>; prints `ready <port>` on stderr.
import type { AgentRunner } from '../src/application/ports/AgentRunner.js';
import { TOKENS } from '../src/application/ports/tokens.js';
import type { AgentConfig } from '../src/adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../src/adapters/config/tokens.js';
import { WinstonLogger } from '../src/adapters/logging/WinstonLogger.js';
import { agentPathsFor } from '../src/adapters/persistence/agentPaths.js';
import { buildApplicationContainer } from '../src/composition/applicationContainer.js';
import { startWebhookListener } from '../src/composition/gateway/webhookListener.js';

/** How long the stand-in agent takes to answer (BENCH_AGENT_MS, default 0: at once). */
const agentMs = Number(process.env.BENCH_AGENT_MS ?? 0);
const noOpAgent: AgentRunner = {
  problemWith: () => null,
  run: async () => {
    if (agentMs > 0) await new Promise((resolve) => setTimeout(resolve, agentMs));
    return { text: '[SILENT]', answeredBy: 'no-op' };
  },
};

const home = process.argv[2]!;
const logger = new WinstonLogger('text', 'info');
const paths = agentPathsFor(home);
const { container, settings } = await buildApplicationContainer(paths, process.env, logger);
container.rebind(TOKENS.AgentRunner).toConstantValue(noOpAgent);
const config = container.get<AgentConfig>(CONFIG_TOKENS.AgentConfig);
const listener = await startWebhookListener(container, config, settings, logger, paths.configFile);
process.stderr.write(`ready ${listener.port}\n`);
process.once('SIGTERM', () => {
  void listener.stop(5_000).then(() => process.exit(0));
});
