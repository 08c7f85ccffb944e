import type { Logger } from '../application/ports/Logger.js';
import type { RunTracing } from '../application/ports/RunTracing.js';
import { LevelLogger } from '../adapters/logging/LevelLogger.js';
import { otlpTraceSettings } from '../adapters/telemetry/otlpSettings.js';
import { errorText } from '../domain/errors.js';
import { agentVersion } from './cli/agentVersion.js';

/** What this process traces with, once a container asked for it; one tracer provider per process. */
let loaded: Promise<{ tracing: RunTracing; shutdown: () => Promise<void> } | null> | null = null;

/**
 * The process's RunTracing (docs/traces.md), or null when the environment asks for no trace
 * export: OpenTelemetry is then not loaded at all, and nothing about start-up changes. With it,
 * the SDK and the exporter are loaded now, by dynamic import (a chunk of their own), once per
 * process, and `logger`'s lines made within a run carry its trace id. A setting that cannot be
 * used is one warning, and the process runs untraced.
 */
export function processTracing(env: NodeJS.ProcessEnv, logger: Logger): Promise<RunTracing | null> {
  loaded ??= loadTracing(env, logger).catch((error: unknown) => {
    logger.warn(`traces are not exported: OpenTelemetry could not be loaded (${errorText(error)})`);
    return null;
  });
  return loaded.then((found) => {
    if (found && logger instanceof LevelLogger) logger.addFields(traceIdField(found.tracing));
    return found?.tracing ?? null;
  });
}

async function loadTracing(env: NodeJS.ProcessEnv, logger: Logger) {
  let settings;
  try {
    settings = otlpTraceSettings(env);
  } catch (error) {
    logger.warn(`traces are not exported: ${errorText(error)}`);
    return null;
  }
  if (settings === null) return null;
  for (const warning of settings.warnings) logger.warn(`traces: ${warning}`);
  const { OpenTelemetryRunTracing } = await import('../adapters/telemetry/OpenTelemetryRunTracing.js');
  const tracing = await OpenTelemetryRunTracing.exporting(settings, agentVersion(), logger);
  return { tracing, shutdown: () => tracing.shutdown() };
}

const traceIdFields = new WeakMap<RunTracing, () => Record<string, unknown> | null>();

/** The `trace_id` field of a log line made within a trace, none outside one: one function per tracing, added to a logger once. */
function traceIdField(tracing: RunTracing): () => Record<string, unknown> | null {
  let field = traceIdFields.get(tracing);
  if (!field) {
    field = () => {
      const traceId = tracing.currentTraceId();
      return traceId === null ? null : { trace_id: traceId };
    };
    traceIdFields.set(tracing, field);
  }
  return field;
}

/**
 * Exports the spans still waiting and stops tracing: the last thing a command or the gateway
 * does before it exits. Nothing when this process never traced. Never throws.
 */
export async function endTracing(): Promise<void> {
  const found = await loaded?.catch(() => null);
  loaded = null;
  await found?.shutdown();
}
