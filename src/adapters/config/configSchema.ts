import { z } from 'zod';
import { PROVIDER_TYPES, type AgentConfig } from './AgentConfig.js';

/*
 * Each schema carries, as its error, the end of the sentence "<key> must …". The loader puts the
 * file, the key path and the value found around it, so every message reads the same way:
 * `~/.agent/config.yaml: cron.max_parallel_jobs must be a whole number of 1 or more (got "four").`
 * Objects are strict so that misspelt keys surface; the loader turns those into warnings.
 */

const text = () => {
  const expected = 'must be a non-empty string';
  return z.string({ error: expected }).min(1, { error: expected });
};

const flag = () => z.boolean({ error: 'must be true or false' });

const wholeNumberFrom = (minimum: number) => {
  const expected = `must be a whole number of ${minimum} or more`;
  return z.int({ error: expected }).min(minimum, { error: expected });
};

const positiveSeconds = () => {
  const expected = 'must be a positive number of seconds';
  return z.number({ error: expected }).positive({ error: expected });
};

const httpUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

const commandLine = () => {
  const expected = 'must be a list of strings, the program first, e.g. ["my-agent", "--quiet"]';
  return z.array(z.string({ error: expected }).min(1, { error: expected }), { error: expected }).min(1, { error: expected });
};

const mapping = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.strictObject(shape, { error: 'must be a mapping of keys to values' });

/** A mapping whose keys this version does not interpret yet: accepted as written. */
const freeMapping = () => z.record(z.string(), z.unknown(), { error: 'must be a mapping of keys to values' });

export const modelSchema = mapping({
  provider: text().optional(),
  name: text().optional(),
  command: commandLine().optional(),
  base_url: httpUrl().optional(),
  api_key_env: text().optional(),
});

export const providerSchema = mapping({
  type: z.enum(PROVIDER_TYPES, {
    error: `must be one of ${PROVIDER_TYPES.map((type) => `"${type}"`).join(', ')}`,
  }),
  command: commandLine().optional(),
  base_url: httpUrl().optional(),
  api_key_env: text().optional(),
  api_keys: z.array(text(), { error: 'must be a list of strings' }).optional(),
});

const fallbackProviderSchema = mapping({
  provider: text(),
  model: text().optional(),
});

const managedSchema = mapping({
  portal_url: httpUrl().optional(),
  callback_url: httpUrl().optional(),
  expected_audience: text().optional(),
  jwks_url: httpUrl().optional(),
});

export const cronSchema = mapping({
  provider: text().optional(),
  wrap_response: flag().default(true),
  max_parallel_jobs: wholeNumberFrom(1).default(4),
  output_retention: wholeNumberFrom(1).default(50),
  script_timeout_seconds: positiveSeconds().optional(),
  bot_chat_delivery_timeout_seconds: positiveSeconds().default(600),
  managed: managedSchema.optional(),
});

const webhookPlatformSchema = z.looseObject(
  {
    enabled: flag().optional(),
    extra: freeMapping().optional(),
  },
  { error: 'must be a mapping of keys to values' },
);

const platformsSchema = z
  .looseObject({ webhook: webhookPlatformSchema.optional() }, { error: 'must be a mapping of platform names to settings' })
  .catchall(freeMapping());

/** The whole file. Typed against AgentConfig so the two cannot drift apart. */
export const agentConfigSchema: z.ZodType<AgentConfig> = mapping({
  timezone: z.string({ error: 'must be an IANA time zone name such as "Europe/Berlin"' }).optional(),
  model: modelSchema.optional(),
  providers: z.record(text(), providerSchema, { error: 'must be a mapping of provider names to settings' }).default({}),
  fallback_providers: z
    .array(fallbackProviderSchema, { error: 'must be a list of {provider, model} entries' })
    .default([]),
  fallback_model: freeMapping().optional(),
  cron: cronSchema.prefault({}),
  platforms: platformsSchema.prefault({}),
  toolsets: z
    .union([freeMapping(), z.array(text())], { error: 'must be a mapping or a list of toolset names' })
    .optional(),
  memory: freeMapping().optional(),
  search: freeMapping().optional(),
});
