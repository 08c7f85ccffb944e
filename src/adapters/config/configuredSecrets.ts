import { isServiceCredential } from '../../domain/childEnvironment.js';
import { isSecretSetting } from '../../domain/platformSettingKeys.js';
import type { NamedSecret } from '../../domain/runs/RunTranscript.js';
import { childEnvironmentPolicyOf } from '../process/ChildEnvironments.js';
import type { AgentConfig } from './AgentConfig.js';

/** Keys of config.yaml whose values are credentials, besides the secret words of platform settings (isSecretSetting). */
const SECRET_KEYS = /(^|_)(api_keys?|secret|secrets|headers)$/i;

/**
 * Every credential the service is configured with, named, for a transcript to be scrubbed of
 * (docs/runs.md, Transcripts): each variable of `env` that is one of the service's credentials
 * (isServiceCredential, docs/processes.md; the paths of `<NAME>_FILE` are not), and each value in
 * config.yaml under a key that holds one (`api_keys`, `secret`, `bot_token`, `password`,
 * `webhook_url`, `headers` …), named by its path. `env` is the environment as given, the held
 * credentials included.
 */
export function configuredSecrets(env: NodeJS.ProcessEnv, config: AgentConfig | null): NamedSecret[] {
  const policy = childEnvironmentPolicyOf(config);
  const secrets: NamedSecret[] = [];
  for (const name of Object.keys(env)) {
    if (/_FILE$/i.test(name) || !isServiceCredential(name, policy)) continue;
    const value = env[name];
    if (typeof value === 'string' && value !== '') secrets.push({ name, value });
  }
  if (config) collect(config, [], false, secrets);
  return secrets;
}

function collect(value: unknown, path: string[], secret: boolean, into: NamedSecret[]): void {
  if (typeof value === 'string') {
    if (secret && value !== '') into.push({ name: path.join('.'), value });
  } else if (Array.isArray(value)) {
    for (const each of value) collect(each, path, secret, into);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, each] of Object.entries(value)) {
      collect(each, [...path, key], secret || SECRET_KEYS.test(key) || isSecretSetting(key), into);
    }
  }
}
