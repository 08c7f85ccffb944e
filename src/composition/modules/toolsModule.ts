import { ContainerModule } from 'inversify';
import { ClarifyTool } from '../../adapters/tools/ClarifyTool.js';
import { CronJobTool } from '../../adapters/tools/CronJobTool.js';
import { DefaultToolCatalog } from '../../adapters/tools/DefaultToolCatalog.js';
import { publicAddressesOnly } from '../../adapters/tools/publicAddresses.js';
import { TerminalTool } from '../../adapters/tools/TerminalTool.js';
import { TOOL_TOKENS } from '../../adapters/tools/tokens.js';
import { WebExtractTool } from '../../adapters/tools/WebExtractTool.js';
import { WebSearchTool } from '../../adapters/tools/WebSearchTool.js';

/**
 * The tools of agent sessions. The job tool is handed to the catalog as a thunk: it needs the
 * job use cases, whose run path needs the agent runner, which needs this catalog.
 */
export const toolsModule = new ContainerModule(({ bind }) => {
  bind(TOOL_TOKENS.Tool).to(TerminalTool).inSingletonScope();
  bind(TOOL_TOKENS.Tool).to(WebSearchTool).inSingletonScope();
  bind(TOOL_TOKENS.PublicAddressPolicy).toConstantValue(publicAddressesOnly);
  bind(TOOL_TOKENS.Tool).to(WebExtractTool).inSingletonScope();
  bind(TOOL_TOKENS.Tool).to(ClarifyTool).inSingletonScope();
  bind(CronJobTool).toSelf().inSingletonScope();
  bind(TOOL_TOKENS.JobTool).toFactory((context) => () => context.get(CronJobTool));
  bind(TOOL_TOKENS.ToolCatalog).to(DefaultToolCatalog).inSingletonScope();
});
