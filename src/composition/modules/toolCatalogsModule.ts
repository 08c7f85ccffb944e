import { ContainerModule, type Container } from 'inversify';
import { RUNTIME_TOKENS } from '../../application/agent/ports/tokens.js';
import { LazyToolCatalog } from '../../adapters/tools/LazyToolCatalog.js';

/**
 * The two tool catalogs of `container` (see toolsModule), bound at once but loaded, modules and
 * all, into the container the first time a session asks one for its tools: `agent cron list`
 * and the other commands that run no agent never parse the tools.
 */
export function toolCatalogsModule(container: Container): ContainerModule {
  let loading: Promise<typeof import('./toolsModule.js')> | null = null;
  const loaded = async () => {
    loading ??= import('./toolsModule.js').then((module) => {
      container.load(module.toolsModule);
      return module;
    });
    try {
      return await loading;
    } catch (error) {
      loading = null;
      throw error;
    }
  };
  return new ContainerModule(({ bind }) => {
    bind(RUNTIME_TOKENS.JobRunToolCatalog).toConstantValue(
      new LazyToolCatalog(async () => container.get((await loaded()).LOADED_TOOL_CATALOGS.JobRuns)),
    );
    bind(RUNTIME_TOKENS.ToolCatalog).toConstantValue(
      new LazyToolCatalog(async () => container.get((await loaded()).LOADED_TOOL_CATALOGS.Sessions)),
    );
  });
}
