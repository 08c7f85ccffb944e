import type { SelectorDefinition } from 'html-to-text';
import { inject, injectable } from 'inversify';
import { ToolInputError, type Tool, type ToolCallContext, type ToolSpec } from '../../application/agent/ports/Tool.js';
import { ToolArguments } from './ToolArguments.js';
import { TOOL_TOKENS } from './tokens.js';
import { decodeBody, httpGet, type HttpAnswer } from './httpGet.js';
import type { AddressPolicy } from './publicAddresses.js';

const TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 2 * 1024 * 1024;
const MAX_TEXT_CHARS = 20_000;

/** Page furniture and non-text elements; the model wants what the page says. */
const SKIPPED = [
  'head',
  'script',
  'style',
  'noscript',
  'template',
  'nav',
  'header',
  'footer',
  'img',
  'picture',
  'svg',
  'iframe',
  'video',
  'audio',
  'canvas',
];

const SELECTORS: SelectorDefinition[] = [
  ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
  // Link text only: the addresses would double the length of most pages.
  { selector: 'a', options: { ignoreHref: true } },
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
  { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
];

type HtmlToText = (html: string) => string;
let converter: Promise<HtmlToText> | null = null;

/** html-to-text is loaded on the first page that needs it, so commands that never fetch a page do not pay for it. */
function htmlConverter(): Promise<HtmlToText> {
  converter ??= import('html-to-text').then(({ compile }) => compile({ wordwrap: false, selectors: SELECTORS }));
  return converter;
}

/**
 * `web_extract`: fetches one http(s) page and returns its readable text, prefixed by the final
 * URL and the title. HTML becomes text (menus, scripts and images left out), JSON is
 * pretty-printed, plain text stays as it is. At most 2 MB of the body is read and at most
 * 20,000 characters returned. A failed fetch or a non-2xx answer is a result that says so.
 *
 * In a session whose context says `privateNetworks: false` (webhook runs, unless their route
 * allows it) only public addresses are fetched, each connection and redirect checked: a
 * payload cannot send the agent to loopback services, the private network or a cloud metadata
 * address. `publicAddresses` is that policy (publicAddressesOnly; tests put in their own).
 */
@injectable()
export class WebExtractTool implements Tool {
  constructor(@inject(TOOL_TOKENS.PublicAddressPolicy) private readonly publicAddresses: AddressPolicy) {}

  readonly spec: ToolSpec = {
    name: 'web_extract',
    description:
      'Fetch a web page (http or https) and return its readable text, with the final URL and the title. ' +
      `The text is cut at ${MAX_TEXT_CHARS.toLocaleString('en')} characters.`,
    parameters: {
      type: 'object',
      properties: { url: { type: 'string', description: 'The http(s) URL to fetch.' } },
      required: ['url'],
      additionalProperties: false,
    },
  };

  async call(args: Record<string, unknown>, context: ToolCallContext): Promise<string> {
    const input = new ToolArguments('web_extract', args);
    input.rejectUnknown(['url']);
    const url = httpUrl(input.requiredString('url', 'the http(s) URL of the page'));
    const result = await httpGet(url, {
      signal: context.signal,
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BODY_BYTES,
      headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5' },
      ...(context.privateNetworks === false ? { addressPolicy: this.publicAddresses } : {}),
    });
    if (!result.ok) {
      const hint = result.refusedAddress
        ? ' Runs started by a webhook fetch only public addresses (a route allows more with allow_private_networks: true).'
        : '';
      return `Could not fetch ${url.href}: ${result.problem}.${hint}`;
    }
    const { answer } = result;
    if (answer.status < 200 || answer.status > 299) {
      const via = answer.url !== url.href ? ` (redirected to ${answer.url})` : '';
      return `Could not fetch ${url.href}${via}: the server answered HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ''}.`;
    }
    const page = readable(answer, await htmlConverter());
    if (page === null) {
      return `${answer.url} is ${answer.mediaType}, which web_extract cannot turn into text.`;
    }
    return render(answer, page);
  }
}

function httpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ToolInputError(`web_extract: "${text}" is not a URL; give a full address such as https://example.com/page.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolInputError(`web_extract fetches only http and https URLs, not ${url.protocol.slice(0, -1)}.`);
  }
  return url;
}

interface ReadablePage {
  title: string | null;
  text: string;
}

function readable(answer: HttpAnswer, htmlToText: HtmlToText): ReadablePage | null {
  const body = decodeBody(answer.body, answer.charset);
  const type = answer.mediaType || sniff(body);
  if (type === 'text/html' || type === 'application/xhtml+xml') {
    return { title: titleOf(body, htmlToText), text: htmlToText(body).trim() };
  }
  if (type === 'application/json' || type.endsWith('+json')) {
    return { title: null, text: prettyJson(body) };
  }
  if (type.startsWith('text/') || type === 'application/xml' || type.endsWith('+xml')) {
    return { title: null, text: body.trim() };
  }
  return null;
}

/** A server that sends no Content-Type: HTML if it looks like it, text if it has no NULs. */
function sniff(body: string): string {
  if (/^\s*<(!doctype html|html|head|body)\b/i.test(body)) return 'text/html';
  return body.includes('\0') ? 'application/octet-stream' : 'text/plain';
}

function titleOf(html: string, htmlToText: HtmlToText): string | null {
  const inner = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html)?.[1];
  if (inner === undefined) return null;
  // The title may hold entities; a one-element conversion decodes them.
  const title = htmlToText(`<p>${inner}</p>`).replace(/\s+/g, ' ').trim();
  return title === '' ? null : title;
}

function prettyJson(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body.trim();
  }
}

function render(answer: HttpAnswer, page: ReadablePage): string {
  const header = [`URL: ${answer.url}`, ...(page.title ? [`Title: ${page.title}`] : [])];
  const notes: string[] = [];
  let text = page.text;
  if (text.length > MAX_TEXT_CHARS) {
    notes.push(`[The text was cut at ${MAX_TEXT_CHARS.toLocaleString('en')} of its ${text.length.toLocaleString('en')} characters.]`);
    text = text.slice(0, MAX_TEXT_CHARS);
  }
  if (answer.truncated) {
    notes.push(
      `[The page is larger than ${MAX_BODY_BYTES / (1024 * 1024)} MB; only its first ${MAX_BODY_BYTES / (1024 * 1024)} MB were read.]`,
    );
  }
  if (text === '') text = '(The page has no readable text.)';
  return [header.join('\n'), text, ...notes].join('\n\n');
}
