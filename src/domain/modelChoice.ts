/** Which provider and model a run asks for; null fields mean "the configured default". */
export interface ModelChoice {
  provider: string | null;
  model: string | null;
}

/**
 * Combines a job's or session's override with the configured default. A provider named by the
 * override brings its own default model: the configured model name belongs to the configured
 * provider and is not passed to another one.
 */
export function chooseModel(override: ModelChoice, configured: ModelChoice): ModelChoice {
  if (override.provider) return { provider: override.provider, model: override.model };
  return { provider: configured.provider, model: override.model ?? configured.model };
}
