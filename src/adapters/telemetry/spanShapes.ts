/**
 * How each root and step of the RunTracing port becomes an OpenTelemetry span: its name, kind and
 * attributes, after the semantic conventions where they have a word for it (GenAI for model and
 * tool calls, HTTP for the webhook request) and `agent.*` for the rest (docs/traces.md).
 */
import { SpanKind, type Attributes } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import type { SpanNotes, TracedRoot, TracedStep } from '../../application/ports/RunTracing.js';

export interface SpanShape {
  name: string;
  kind: SpanKind;
  attributes: Attributes;
}

/** The root span of a trace. */
export function rootShape(root: TracedRoot): SpanShape {
  switch (root.kind) {
    case 'cron_run':
      return {
        name: `cron run ${root.jobName}`,
        kind: SpanKind.INTERNAL,
        attributes: {
          'agent.run.kind': 'cron',
          'agent.run.id': root.runId,
          'agent.job.id': root.jobId,
          'agent.job.name': root.jobName,
          ...(root.slot !== null ? { 'agent.cron.slot': root.slot } : {}),
          ...(root.attempt !== undefined ? { 'agent.run.attempt': root.attempt } : {}),
        },
      };
    case 'webhook_run':
      return {
        name: `webhook run ${root.route}`,
        kind: SpanKind.CONSUMER,
        attributes: {
          'agent.run.kind': 'webhook',
          'agent.run.id': root.eventId,
          'agent.webhook.route': root.route,
          'agent.webhook.event': root.event,
          'agent.webhook.delivery_id': root.deliveryId,
          'agent.webhook.event_id': root.eventId,
          ...(root.attempt !== undefined ? { 'agent.run.attempt': root.attempt } : {}),
        },
      };
    case 'chat_turn':
      return {
        name: `chat turn ${root.platform}`,
        kind: SpanKind.SERVER,
        attributes: { 'agent.run.kind': 'chat', 'agent.chat.platform': root.platform, 'agent.chat.conversation': root.conversation },
      };
    case 'webhook_request':
      return {
        name: 'POST /webhooks/:route',
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: 'POST',
          [ATTR_HTTP_ROUTE]: '/webhooks/:route',
          [ATTR_URL_PATH]: `/webhooks/${root.route}`,
          'agent.webhook.route': root.route,
        },
      };
  }
}

/** The span of a step. */
export function stepShape(step: TracedStep): SpanShape {
  switch (step.kind) {
    case 'model_call':
      return {
        name: `chat ${step.model}`,
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
          [ATTR_GEN_AI_SYSTEM]: step.api,
          [ATTR_GEN_AI_PROVIDER_NAME]: step.api,
          [ATTR_GEN_AI_REQUEST_MODEL]: step.model,
          'agent.provider': step.provider,
          ...serverOf(step.endpoint ?? null),
        },
      };
    case 'tool_call':
      return {
        name: `execute_tool ${step.tool}`,
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: step.tool,
          [ATTR_GEN_AI_TOOL_CALL_ID]: step.callId,
        },
      };
    case 'delivery':
      return {
        name: `deliver ${step.platform ?? step.target}`,
        kind: step.platform === null ? SpanKind.INTERNAL : SpanKind.CLIENT,
        attributes: {
          'agent.delivery.target': step.target,
          'messaging.destination.name': step.target,
          ...(step.platform !== null ? { 'agent.delivery.platform': step.platform, 'messaging.system': step.platform } : {}),
        },
      };
  }
}

/** `server.address` and `server.port` of a model's endpoint; none when it is not a URL. */
function serverOf(endpoint: string | null): Attributes {
  if (endpoint === null || !URL.canParse(endpoint)) return {};
  const url = new URL(endpoint);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { [ATTR_SERVER_ADDRESS]: url.hostname, [ATTR_SERVER_PORT]: port };
}

/** The attributes of what a span noted; `error` is the span's status, not an attribute. */
export function noteAttributes(notes: SpanNotes): Attributes {
  const attributes: Attributes = {};
  if (notes.usage) {
    attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = notes.usage.inputTokens;
    attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = notes.usage.outputTokens;
    if (notes.usage.cachedInputTokens) attributes[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = notes.usage.cachedInputTokens;
  }
  if (notes.outcome !== undefined) attributes['agent.outcome'] = notes.outcome;
  if (notes.messageIds !== undefined) {
    // Only a delivery notes message ids: its outcome under its own name too.
    if (notes.outcome !== undefined) attributes['agent.delivery.outcome'] = notes.outcome;
    attributes['agent.delivery.message_ids'] = [...notes.messageIds];
    if (notes.messageIds.length > 0) attributes['messaging.message.id'] = notes.messageIds[0];
  }
  if (notes.httpStatus !== undefined) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = notes.httpStatus;
  if (notes.webhook) {
    attributes['agent.webhook.event'] = notes.webhook.event;
    attributes['agent.webhook.delivery_id'] = notes.webhook.deliveryId;
    if (notes.webhook.eventId !== undefined) attributes['agent.webhook.event_id'] = notes.webhook.eventId;
  }
  if (notes.error) attributes[ATTR_ERROR_TYPE] = notes.httpStatus !== undefined ? String(notes.httpStatus) : 'agent_error';
  return attributes;
}
