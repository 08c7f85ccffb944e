import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/**
 * A local OTLP/HTTP trace receiver for the tests (`POST /v1/traces`): it takes both encodings
 * of the protocol, protobuf (`application/x-protobuf`, decoded with protobufjs against the
 * messages of opentelemetry-proto's trace service, written out below) and JSON
 * (`application/json`), answers 200 with an empty export response, and keeps every span it got,
 * in one shape whatever the encoding.
 */

/** A span as the receiver keeps it: ids in lower-case hex, attribute values as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, unknown> }>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  /** The attributes of the resource it came with (`service.name` …). */
  resource: Record<string, unknown>;
  /** The Content-Type of the request it came in. */
  contentType: string;
}

/** SpanKind and StatusCode are enums in the .proto; their numbers are read as int32 here. */
const KEY_VALUE = { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } };
const OTLP_TRACES = {
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
    ResourceSpans: {
      fields: {
        resource: { type: 'Resource', id: 1 },
        scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 },
        schemaUrl: { type: 'string', id: 3 },
      },
    },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 }, droppedAttributesCount: { type: 'uint32', id: 2 } } },
    ScopeSpans: {
      fields: {
        scope: { type: 'InstrumentationScope', id: 1 },
        spans: { rule: 'repeated', type: 'Span', id: 2 },
        schemaUrl: { type: 'string', id: 3 },
      },
    },
    InstrumentationScope: {
      fields: {
        name: { type: 'string', id: 1 },
        version: { type: 'string', id: 2 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
        droppedAttributesCount: { type: 'uint32', id: 4 },
      },
    },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        traceState: { type: 'string', id: 3 },
        parentSpanId: { type: 'bytes', id: 4 },
        flags: { type: 'fixed32', id: 16 },
        name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 },
        startTimeUnixNano: { type: 'fixed64', id: 7 },
        endTimeUnixNano: { type: 'fixed64', id: 8 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
        droppedAttributesCount: { type: 'uint32', id: 10 },
        events: { rule: 'repeated', type: 'Event', id: 11 },
        droppedEventsCount: { type: 'uint32', id: 12 },
        links: { rule: 'repeated', type: 'Link', id: 13 },
        droppedLinksCount: { type: 'uint32', id: 14 },
        status: { type: 'Status', id: 15 },
      },
    },
    Event: {
      fields: {
        timeUnixNano: { type: 'fixed64', id: 1 },
        name: { type: 'string', id: 2 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
        droppedAttributesCount: { type: 'uint32', id: 4 },
      },
    },
    Link: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        traceState: { type: 'string', id: 3 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 4 },
        droppedAttributesCount: { type: 'uint32', id: 5 },
        flags: { type: 'fixed32', id: 6 },
      },
    },
    Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
    KeyValue: KEY_VALUE,
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
        arrayValue: { type: 'ArrayValue', id: 5 },
        kvlistValue: { type: 'KeyValueList', id: 6 },
        bytesValue: { type: 'bytes', id: 7 },
      },
    },
    ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
    KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
  },
};
const REQUEST = protobuf.Root.fromJSON(OTLP_TRACES).lookupType('ExportTraceServiceRequest');

/** The request body as plain objects, as OTLP/JSON has it (ids hex in JSON, base64 from protobuf: see hexOf). */
function decoded(body: Buffer, contentType: string): { resourceSpans?: any[] } {
  if (contentType.startsWith('application/json')) return JSON.parse(body.toString('utf8'));
  return REQUEST.toObject(REQUEST.decode(body), { longs: String, bytes: String, defaults: false, oneofs: true }) as {
    resourceSpans?: any[];
  };
}

/** OTLP/JSON writes ids in hex; protobufjs gives bytes as base64. */
function hexOf(id: string | undefined, contentType: string): string {
  if (!id) return '';
  return contentType.startsWith('application/json') ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

/** An AnyValue as a plain value: protobufjs names the member set in `value` (oneofs), JSON has only that member. */
function valueOf(any: any): unknown {
  if (any === null || any === undefined) return undefined;
  const member = typeof any.value === 'string' && any.value in any ? any.value : Object.keys(any).find((key) => key.endsWith('Value'));
  if (member === undefined) return undefined;
  const value = any[member];
  if (member === 'arrayValue') return (value.values ?? []).map(valueOf);
  if (member === 'intValue') return Number(value);
  return value;
}

function attributesOf(list: any[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((entry: any) => [entry.key, valueOf(entry.value)]));
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** The headers of each export request. */
  readonly requests: Array<Record<string, string | string[] | undefined>> = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const contentType = req.headers['content-type'] ?? '';
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        try {
          receiver.requests.push(req.headers);
          receiver.take(decoded(Buffer.concat(chunks), contentType), contentType);
        } catch (error) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
          return;
        }
        if (contentType.startsWith('application/json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    const receiver = new OtlpReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private take(request: { resourceSpans?: any[] }, contentType: string): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            traceId: hexOf(span.traceId, contentType),
            spanId: hexOf(span.spanId, contentType),
            parentSpanId: hexOf(span.parentSpanId, contentType),
            name: span.name,
            kind: Number(span.kind ?? 0),
            attributes: attributesOf(span.attributes),
            links: (span.links ?? []).map((link: any) => ({
              traceId: hexOf(link.traceId, contentType),
              spanId: hexOf(link.spanId, contentType),
              attributes: attributesOf(link.attributes),
            })),
            status: { code: Number(span.status?.code ?? 0), message: span.status?.message ?? '' },
            resource,
            contentType,
          });
        }
      }
    }
  }
}
