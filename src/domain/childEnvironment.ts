import { KNOWN_PLATFORMS } from './DeliveryTarget.js';
import { environmentVariableFor, isSecretSetting } from './platformSettingKeys.js';

/** Environment variables by name, as a process holds them. */
export type EnvironmentVariables = Readonly<Record<string, string | undefined>>;

/** What the operator said about the environment of the programs runs start. */
export interface ChildEnvironmentPolicy {
  /** `tools.terminal.env_passthrough`: names handed on although they hold a credential. */
  passthrough: readonly string[];
  /**
   * Variables the configuration names as holding a model provider's key (`api_key_env`), whatever
   * their name; a credential like the `*_API_KEY` ones.
   */
  modelKeyVariables: readonly string[];
}

/** No name passed through and none named as a model key: what is known before any configuration is read. */
export const NO_CHILD_ENVIRONMENT_POLICY: ChildEnvironmentPolicy = { passthrough: [], modelKeyVariables: [] };

/** Who a child is, which decides which of the service's credentials it may see. */
export type ChildKind =
  /**
   * What a job or a model can make run: pre-run scripts, the terminal tool and everything they
   * start. Text from outside (a fetched page, a webhook payload) can steer a model, so these see
   * no credential at all.
   */
  | 'untrusted'
  /** A `command` model: an agent program, which may need an LLM key but nothing else. */
  | 'model-program'
  /** The code-host CLI of `repo_comment`, which authenticates with GH_TOKEN or GITHUB_TOKEN. */
  | 'code-host-cli';

const MODEL_KEY = /_API_KEYS?$/;
const FILE_SUFFIX = '_FILE';
const GENERIC_SECRET = /_(TOKEN|SECRET|PASSWORD)S?$/;
const NAMED_SECRETS = new Set([
  'GH_TOKEN',
  'GITHUB_TOKEN',
  'AGENT_CRON_SCHEDULER_TOKEN',
  'AGENT_DATABASE_URL',
  'AGENT_DASHBOARD_TOKEN',
  // PostgreSQL's client library reads a password, or files that hold one, from these.
  'PGPASSWORD',
  'PGPASSFILE',
  'PGSERVICEFILE',
  'DATABASE_URL',
  // The headers of OTLP exports, which carry a tracing backend's key (docs/traces.md).
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
]);
/** The prefixes of the platforms' settings as `<PLATFORM>_<KEY>`, whose secret ones are the keys isSecretSetting names. */
const PLATFORM_PREFIXES = [...KNOWN_PLATFORMS, 'webhook'].map((platform) => environmentVariableFor(platform, ''));
const CODE_HOST_LOGIN = new Set(['GH_TOKEN', 'GITHUB_TOKEN', 'GH_ENTERPRISE_TOKEN', 'GITHUB_ENTERPRISE_TOKEN']);

function isModelKey(name: string, policy: ChildEnvironmentPolicy): boolean {
  return MODEL_KEY.test(name.toUpperCase()) || policy.modelKeyVariables.includes(name);
}

/**
 * Whether the variable `name` holds a credential of the service: a model provider's key
 * (`*_API_KEY(S)`, or a variable the configuration names as one), a platform's secret setting
 * (`TELEGRAM_BOT_TOKEN`, `FEISHU_APP_SECRET`, `DINGTALK_WEBHOOK_URL` …), anything ending in
 * `_TOKEN`, `_SECRET` or `_PASSWORD`, the code host's `GH_TOKEN`/`GITHUB_TOKEN`, and the
 * service's own `AGENT_CRON_SCHEDULER_TOKEN`, `AGENT_DATABASE_URL` and `AGENT_DASHBOARD_TOKEN`, the OTLP
 * exporter's `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, and
 * PostgreSQL's `PGPASSWORD`, `PGPASSFILE`, `PGSERVICEFILE` and `DATABASE_URL`; and `<any of
 * those>_FILE`, the file one was read from.
 * Names are compared case-insensitively: a shell may not care, a leak would.
 */
export function isServiceCredential(name: string, policy: ChildEnvironmentPolicy): boolean {
  const upper = name.toUpperCase();
  // `<credential>_FILE` names the file a credential was read from (docs/configuration.md).
  if (upper.endsWith(FILE_SUFFIX) && upper.length > FILE_SUFFIX.length && isServiceCredential(name.slice(0, -FILE_SUFFIX.length), policy))
    return true;
  if (isModelKey(name, policy) || GENERIC_SECRET.test(upper) || NAMED_SECRETS.has(upper)) return true;
  const prefix = PLATFORM_PREFIXES.find((each) => upper.startsWith(each));
  return prefix !== undefined && isSecretSetting(upper.slice(prefix.length));
}

/**
 * `env` without the service's credentials, for a child of this kind: an untrusted child gets
 * none, a model program keeps the model keys, the code-host CLI keeps its login. Names in
 * `policy.passthrough` are always kept: the operator asked for them.
 */
export function childEnvironment(env: EnvironmentVariables, kind: ChildKind, policy: ChildEnvironmentPolicy): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (isServiceCredential(name, policy) && !policy.passthrough.includes(name) && !allowedFor(kind, name, policy)) continue;
    kept[name] = value;
  }
  return kept;
}

function allowedFor(kind: ChildKind, name: string, policy: ChildEnvironmentPolicy): boolean {
  switch (kind) {
    case 'untrusted':
      return false;
    case 'model-program':
      return isModelKey(name, policy);
    case 'code-host-cli':
      return CODE_HOST_LOGIN.has(name.toUpperCase());
  }
}
