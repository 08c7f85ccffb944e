import 'reflect-metadata';
import { ToolInputError, type ImageAnswer, type ToolCallContext } from '../../../src/application/agent/ports/Tool.js';
import type { TranscriptImage } from '../../../src/domain/agent/transcript.js';
import { publicAddressesOnly } from '../../../src/adapters/tools/publicAddresses.js';
import { VisionTool } from '../../../src/adapters/tools/VisionTool.js';
import { answer, LocalWebServer } from '../../support/localWebServer.js';
import { GIF_START, PNG_BASE64, PNG_BYTES } from '../../support/sampleImages.js';

const TEN_MB = 10 * 1024 * 1024;
let web: LocalWebServer;
const tool = new VisionTool(publicAddressesOnly);

/** A model stand-in: records each question and answers `reply`. */
function asking(reply: ImageAnswer = { kind: 'answer', text: 'One red pixel.' }) {
  const questions: Array<{ image: TranscriptImage; question: string }> = [];
  const context: ToolCallContext = {
    signal: new AbortController().signal,
    unattended: true,
    askAboutImage: async (image, question) => {
      questions.push({ image, question });
      return reply;
    },
  };
  return { context, questions };
}

/** A PNG signature followed by zeros, `size` bytes in all. */
const pngOfSize = (size: number) => Buffer.concat([PNG_BYTES.subarray(0, 8), Buffer.alloc(size - 8)]);

beforeAll(async () => {
  web = await LocalWebServer.start({
    '/pixel.png': answer(200, 'image/png', PNG_BYTES),
    '/mislabelled': answer(200, 'text/plain', PNG_BYTES),
    '/page.png': answer(200, 'image/png', '<html><body>Not an image</body></html>'),
    '/anim.gif': answer(200, null, GIF_START),
    '/empty.png': answer(200, 'image/png', ''),
    '/exactly-10mb.png': answer(200, 'image/png', pngOfSize(TEN_MB)),
    '/over-10mb.png': answer(200, 'image/png', pngOfSize(TEN_MB + 1)),
    '/moved': (_request, response) => response.writeHead(302, { location: '/pixel.png' }).end(),
    '/gone.png': answer(404, 'text/html', '<p>missing</p>'),
  });
});

afterAll(() => web.close());

describe('VisionTool', () => {
  it('fetches the image, hands it to the model with the question, and returns the answer', async () => {
    const { context, questions } = asking();

    const text = await tool.call({ image_url: web.url('/pixel.png'), question: 'What colour is it?' }, context);

    expect(text).toBe('One red pixel.');
    expect(questions).toEqual([{ image: { mediaType: 'image/png', base64: PNG_BASE64 }, question: 'What colour is it?' }]);
  });

  it('asks for a description when no question is given', async () => {
    const { context, questions } = asking();

    await tool.call({ image_url: web.url('/pixel.png'), question: null }, context);

    expect(questions[0]!.question).toBe('Describe this image in detail, including any text it shows.');
  });

  it('decides the type by the content, not by what the server declared', async () => {
    const { context, questions } = asking();

    await tool.call({ image_url: web.url('/mislabelled') }, context);
    await tool.call({ image_url: web.url('/anim.gif') }, context);
    const refused = await tool.call({ image_url: web.url('/page.png') }, context);

    expect(questions.map(({ image }) => image.mediaType)).toEqual(['image/png', 'image/gif']);
    expect(refused).toBe(
      `The file at ${web.url('/page.png')} (declared as image/png) is not a PNG, JPEG, GIF or WebP image by its content; vision takes only those.`,
    );
  });

  it('takes an image of 10 MB and refuses a larger one', async () => {
    const { context, questions } = asking();

    await tool.call({ image_url: web.url('/exactly-10mb.png') }, context);
    const refused = await tool.call({ image_url: web.url('/over-10mb.png') }, context);

    expect(Buffer.from(questions[0]!.image.base64, 'base64')).toHaveLength(TEN_MB);
    expect(questions).toHaveLength(1);
    expect(refused).toBe(`The image at ${web.url('/over-10mb.png')} is larger than 10 MB, the most vision takes.`);
  });

  it('follows redirects and says where an error answer came from', async () => {
    const { context, questions } = asking();

    await tool.call({ image_url: web.url('/moved') }, context);
    const gone = await tool.call({ image_url: web.url('/gone.png') }, context);
    const empty = await tool.call({ image_url: web.url('/empty.png') }, context);

    expect(questions).toHaveLength(1);
    expect(gone).toBe(`Could not fetch the image at ${web.url('/gone.png')}: the server answered HTTP 404 Not Found.`);
    expect(empty).toBe(`The file at ${web.url('/empty.png')} is empty, not an image.`);
  });

  it('fetches only public addresses in a run that may not reach private networks, as web_extract does', async () => {
    const { context, questions } = asking();
    const requestsBefore = web.requests.length;

    const text = await tool.call({ image_url: web.url('/pixel.png') }, { ...context, privateNetworks: false });

    expect(questions).toEqual([]);
    expect(web.requests).toHaveLength(requestsBefore);
    expect(text).toBe(
      `Could not fetch the image at ${web.url('/pixel.png')}: 127.0.0.1 is a loopback, private or otherwise non-public address. ` +
        'Runs started by a webhook fetch only public addresses (a route allows more with allow_private_networks: true).',
    );
  });

  it('takes a data: URL, by its content too', async () => {
    const { context, questions } = asking();

    await tool.call({ image_url: `data:application/octet-stream;base64,${PNG_BASE64}` }, context);
    const notImage = await tool.call({ image_url: 'data:text/plain,hello' }, context);
    const tooLarge = await tool.call({ image_url: `data:image/png;base64,${pngOfSize(TEN_MB + 3).toString('base64')}` }, context);

    expect(questions.map(({ image }) => image)).toEqual([{ mediaType: 'image/png', base64: PNG_BASE64 }]);
    expect(notImage).toBe(
      'The data: URL (declared as text/plain) is not a PNG, JPEG, GIF or WebP image by its content; vision takes only those.',
    );
    expect(tooLarge).toBe('The image in the data: URL is larger than 10 MB, the most vision takes.');
  });

  it('answers one sentence for a model that does not take images, and for a call that failed', async () => {
    const noImages = asking({ kind: 'no_images', model: 'local (llama3.2)', problem: 'it answered "image input is not supported"' });
    const failed = asking({ kind: 'failed', model: 'local (llama3.2)', problem: 'connect ECONNREFUSED 127.0.0.1:9' });

    expect(await tool.call({ image_url: web.url('/pixel.png') }, noImages.context)).toBe(
      'This model does not take images (local (llama3.2)): it answered "image input is not supported"; go on without looking at the image.',
    );
    expect(await tool.call({ image_url: web.url('/pixel.png') }, failed.context)).toBe(
      'Could not ask the model local (llama3.2) about the image: connect ECONNREFUSED 127.0.0.1:9.',
    );
  });

  it('says so where the session has no model to ask', async () => {
    const text = await tool.call({ image_url: web.url('/pixel.png') }, { signal: new AbortController().signal, unattended: true });

    expect(text).toBe('This session has no model that could look at the image; go on without it.');
  });

  it('refuses what is not an http(s) or data: URL, and unknown arguments, so the model can call again', async () => {
    const { context } = asking();

    await expect(tool.call({ image_url: 'picture.png' }, context)).rejects.toThrow(
      new ToolInputError('vision: "picture.png" is not a URL; give the full http(s) address of the image, or a data: URL.'),
    );
    await expect(tool.call({ image_url: 'file:///etc/passwd' }, context)).rejects.toThrow(
      'vision takes http, https and data: URLs, not file.',
    );
    await expect(tool.call({}, context)).rejects.toThrow('vision needs "image_url": the http(s) URL of the image, or a data: URL.');
    await expect(tool.call({ url: web.url('/pixel.png') }, context)).rejects.toThrow(
      'vision has no argument "url"; its arguments are image_url, question.',
    );
  });
});
