import type { ImageMediaType } from '../../domain/agent/transcript.js';

/** The largest image the `vision` tool hands to a model. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/**
 * The image type of `bytes`, read from their first bytes (the magic numbers), whatever a server
 * or a data URL declared; null for anything but PNG, JPEG, GIF or WebP.
 */
export function imageTypeOf(bytes: Uint8Array): ImageMediaType | null {
  const startsWith = (signature: readonly number[], at = 0) => signature.every((byte, index) => bytes[at + index] === byte);
  const ascii = (text: string) => [...text].map((character) => character.charCodeAt(0));
  if (startsWith([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(ascii('GIF87a')) || startsWith(ascii('GIF89a'))) return 'image/gif';
  if (startsWith(ascii('RIFF')) && startsWith(ascii('WEBP'), 8)) return 'image/webp';
  return null;
}

/** A `data:` URL's bytes and declared media type, or why it is not one. */
export type DataUrlContent = { ok: true; bytes: Buffer; declaredType: string } | { ok: false; problem: string };

/**
 * Reads a `data:[<media type>][;base64],<data>` URL (RFC 2397): base64 or percent-encoded. The
 * declared type is only for messages; what the bytes are is decided by {@link imageTypeOf}.
 */
export function readDataUrl(url: string): DataUrlContent {
  const comma = url.indexOf(',');
  if (!/^data:/i.test(url) || comma < 0) {
    return { ok: false, problem: 'it is not a data URL of the form data:image/png;base64,…' };
  }
  const header = url.slice('data:'.length, comma).split(';');
  const isBase64 = header.slice(1).some((parameter) => parameter.trim().toLowerCase() === 'base64');
  const declaredType = header[0]!.trim().toLowerCase() || 'text/plain';
  const data = url.slice(comma + 1);
  if (isBase64) {
    const compact = data.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact)) return { ok: false, problem: 'its base64 data holds characters base64 has not' };
    return { ok: true, bytes: Buffer.from(compact, 'base64'), declaredType };
  }
  return { ok: true, bytes: percentDecoded(data), declaredType };
}

/** Percent-encoded bytes: each `%XX` one byte, any other character its UTF-8 bytes. */
function percentDecoded(data: string): Buffer {
  const parts = data.split(/(%[0-9a-fA-F]{2})/);
  return Buffer.concat(
    parts.map((part) => (/^%[0-9a-fA-F]{2}$/.test(part) ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(part, 'utf8'))),
  );
}
