import { inject, injectable } from 'inversify';
import { ToolInputError, type Tool, type ToolCallContext, type ToolSpec } from '../../application/agent/ports/Tool.js';
import type { TranscriptImage } from '../../domain/agent/transcript.js';
import { httpGet } from './httpGet.js';
import { imageTypeOf, MAX_IMAGE_BYTES, readDataUrl } from './imageBytes.js';
import type { AddressPolicy } from './publicAddresses.js';
import { TOOL_TOKENS } from './tokens.js';
import { ToolArguments } from './ToolArguments.js';

const TIMEOUT_MS = 30_000;
const MAX_MEGABYTES = MAX_IMAGE_BYTES / (1024 * 1024);
const DEFAULT_QUESTION = 'Describe this image in detail, including any text it shows.';
const TAKEN = 'PNG, JPEG, GIF or WebP';

/** An image ready for the model, or the one sentence that says why there is none. */
type Fetched = { ok: true; image: TranscriptImage } | { ok: false; sentence: string };

/**
 * `vision`: looks at one image for the model. It takes `image_url` (http(s), or a `data:` URL)
 * and an optional `question`, reads the image (at most 10 MB; PNG, JPEG, GIF or WebP by its
 * first bytes, whatever type was declared), and asks the run's own model about it in a call of
 * its own (ToolCallContext.askAboutImage), whose answer is the result. An image it cannot get,
 * and a model that takes no images, are one-sentence results, not errors of the run.
 *
 * Addresses follow web_extract's rule: where the context says `privateNetworks: false`
 * (webhook runs, unless their route allows it), only public addresses, each connection and
 * redirect checked.
 */
@injectable()
export class VisionTool implements Tool {
  constructor(@inject(TOOL_TOKENS.PublicAddressPolicy) private readonly publicAddresses: AddressPolicy) {}

  readonly spec: ToolSpec = {
    name: 'vision',
    description:
      `Look at one image (${TAKEN}, at most ${MAX_MEGABYTES} MB) at an http(s) URL or in a data: URL, ` +
      'and answer a question about it. Returns what the image shows, as the answer to the question.',
    parameters: {
      type: 'object',
      properties: {
        image_url: { type: 'string', description: 'The http(s) URL of the image, or a data: URL (data:image/png;base64,…).' },
        question: { type: 'string', description: 'What to find out about the image; default: a detailed description.' },
      },
      required: ['image_url'],
      additionalProperties: false,
    },
  };

  async call(args: Record<string, unknown>, context: ToolCallContext): Promise<string> {
    const input = new ToolArguments('vision', args);
    input.rejectUnknown(['image_url', 'question']);
    const address = input.requiredString('image_url', 'the http(s) URL of the image, or a data: URL').trim();
    const question = input.string('question')?.trim() || DEFAULT_QUESTION;
    const fetched = /^data:/i.test(address) ? fromDataUrl(address) : await this.fromWeb(imageUrl(address), context);
    if (!fetched.ok) return fetched.sentence;
    if (!context.askAboutImage) return 'This session has no model that could look at the image; go on without it.';
    const answer = await context.askAboutImage(fetched.image, question);
    switch (answer.kind) {
      case 'answer':
        return answer.text.trim() === '' ? `The model gave no answer about the image.` : answer.text;
      case 'no_images':
        return `This model does not take images (${answer.model}): ${answer.problem}; go on without looking at the image.`;
      case 'failed':
        return `Could not ask the model ${answer.model} about the image: ${answer.problem}.`;
    }
  }

  private async fromWeb(url: URL, context: ToolCallContext): Promise<Fetched> {
    const result = await httpGet(url, {
      signal: context.signal,
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_IMAGE_BYTES,
      headers: { accept: 'image/png,image/jpeg,image/gif,image/webp;q=0.9,*/*;q=0.5' },
      ...(context.privateNetworks === false ? { addressPolicy: this.publicAddresses } : {}),
    });
    if (!result.ok) {
      const hint = result.refusedAddress
        ? ' Runs started by a webhook fetch only public addresses (a route allows more with allow_private_networks: true).'
        : '';
      return { ok: false, sentence: `Could not fetch the image at ${url.href}: ${result.problem}.${hint}` };
    }
    const { answer } = result;
    const via = answer.url !== url.href ? ` (redirected to ${answer.url})` : '';
    if (answer.status < 200 || answer.status > 299) {
      const status = `HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ''}`;
      return { ok: false, sentence: `Could not fetch the image at ${url.href}${via}: the server answered ${status}.` };
    }
    if (answer.truncated) {
      return { ok: false, sentence: `The image at ${url.href}${via} is larger than ${MAX_MEGABYTES} MB, the most vision takes.` };
    }
    return imageFrom(answer.body, `The file at ${url.href}${via}`, answer.mediaType);
  }
}

function fromDataUrl(address: string): Fetched {
  const content = readDataUrl(address);
  if (!content.ok) return { ok: false, sentence: `The image_url is not a usable data: URL: ${content.problem}.` };
  if (content.bytes.length > MAX_IMAGE_BYTES) {
    return { ok: false, sentence: `The image in the data: URL is larger than ${MAX_MEGABYTES} MB, the most vision takes.` };
  }
  return imageFrom(content.bytes, 'The data: URL', content.declaredType);
}

/** The image, if its bytes are one of the types every model format takes; the declared type is only named. */
function imageFrom(bytes: Buffer, what: string, declaredType: string): Fetched {
  if (bytes.length === 0) return { ok: false, sentence: `${what} is empty, not an image.` };
  const mediaType = imageTypeOf(bytes);
  if (mediaType === null) {
    const declared = declaredType ? `declared as ${declaredType}` : 'with no declared type';
    return { ok: false, sentence: `${what} (${declared}) is not a ${TAKEN} image by its content; vision takes only those.` };
  }
  return { ok: true, image: { mediaType, base64: bytes.toString('base64') } };
}

function imageUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolInputError(`vision: "${text}" is not a URL; give the full http(s) address of the image, or a data: URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolInputError(`vision takes http, https and data: URLs, not ${url.protocol.slice(0, -1)}.`);
  }
  return url;
}
