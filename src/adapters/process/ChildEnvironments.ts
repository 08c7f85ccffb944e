import { inject, injectable, optional } from 'inversify';
import { childEnvironment, type ChildEnvironmentPolicy, type ChildKind } from '../../domain/childEnvironment.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { environmentAsGiven } from '../system/hostTimeZone.js';
import { CONFIG_TOKENS } from '../config/tokens.js';

/** What config.yaml says of the environment: the names passed through, and the variables it names as model keys. */
export function childEnvironmentPolicyOf(config: AgentConfig | null): ChildEnvironmentPolicy {
  return {
    passthrough: config?.tools?.terminal?.env_passthrough ?? [],
    modelKeyVariables: [
      config?.model?.api_key_env,
      ...Object.values(config?.providers ?? {}).map((provider) => provider.api_key_env),
    ].filter((name): name is string => typeof name === 'string'),
  };
}

/**
 * The environments of the programs the service starts, each without the credentials that kind
 * of program has no business seeing (src/domain/childEnvironment.ts, docs/processes.md). Read
 * from the environment at each call, so a variable set later is judged too.
 */
@injectable()
export class ChildEnvironments {
  private readonly policy: ChildEnvironmentPolicy;

  constructor(
    @inject(CONFIG_TOKENS.Environment) private readonly env: NodeJS.ProcessEnv,
    @inject(CONFIG_TOKENS.AgentConfig) @optional() config: AgentConfig | null = null,
  ) {
    this.policy = childEnvironmentPolicyOf(config);
  }

  /** For this process's environment and no configuration: what tests and stand-alone uses get. */
  static ofThisProcess(): ChildEnvironments {
    return new ChildEnvironments(process.env);
  }

  /** Pre-run scripts, the terminal tool and all they start: no credential of the service. */
  forUntrusted(): NodeJS.ProcessEnv {
    return this.for('untrusted');
  }

  /** A `command` model: the model providers' keys, no other credential. */
  forModelProgram(): NodeJS.ProcessEnv {
    return this.for('model-program');
  }

  /** The code host's CLI: its own login (GH_TOKEN, GITHUB_TOKEN), no other credential. */
  forCodeHostCli(): NodeJS.ProcessEnv {
    return this.for('code-host-cli');
  }

  private for(kind: ChildKind): NodeJS.ProcessEnv {
    return childEnvironment(environmentAsGiven(this.env), kind, this.policy);
  }
}
