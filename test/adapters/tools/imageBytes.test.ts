import { imageTypeOf, readDataUrl } from '../../../src/adapters/tools/imageBytes.js';
import { GIF_START, JPEG_START, PNG_BASE64, PNG_BYTES, WEBP_START } from '../../support/sampleImages.js';

describe('imageTypeOf', () => {
  it('tells PNG, JPEG, GIF and WebP by their first bytes', () => {
    expect(imageTypeOf(PNG_BYTES)).toBe('image/png');
    expect(imageTypeOf(JPEG_START)).toBe('image/jpeg');
    expect(imageTypeOf(GIF_START)).toBe('image/gif');
    expect(imageTypeOf(Buffer.from('GIF87a'))).toBe('image/gif');
    expect(imageTypeOf(WEBP_START)).toBe('image/webp');
  });

  it('takes nothing else, however it starts', () => {
    expect(imageTypeOf(Buffer.from('<html><body>not an image</body></html>'))).toBeNull();
    expect(imageTypeOf(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(imageTypeOf(Buffer.from('%PDF-1.7'))).toBeNull();
    // A RIFF file that is not WebP (a WAV sound).
    expect(imageTypeOf(Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE')]))).toBeNull();
    // The PNG signature cut short.
    expect(imageTypeOf(PNG_BYTES.subarray(0, 4))).toBeNull();
    expect(imageTypeOf(Buffer.alloc(0))).toBeNull();
  });
});

describe('readDataUrl', () => {
  it('reads base64 data and the declared type', () => {
    expect(readDataUrl(`data:image/png;base64,${PNG_BASE64}`)).toEqual({ ok: true, bytes: PNG_BYTES, declaredType: 'image/png' });
  });

  it('reads percent-encoded bytes, and a URL without a type as text/plain', () => {
    const encoded = [...PNG_BYTES].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

    expect(readDataUrl(`data:,${encoded}`)).toEqual({ ok: true, bytes: PNG_BYTES, declaredType: 'text/plain' });
  });

  it('says what is wrong with a URL it cannot read', () => {
    expect(readDataUrl('data:image/png;base64')).toEqual({
      ok: false,
      problem: 'it is not a data URL of the form data:image/png;base64,…',
    });
    expect(readDataUrl('data:image/png;base64,@@@@')).toEqual({ ok: false, problem: 'its base64 data holds characters base64 has not' });
  });
});
