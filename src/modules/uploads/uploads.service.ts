import type sharpType from 'sharp';
import type { Metadata } from 'sharp';
import type { AppContext } from '../../context.js';
import { randomToken } from '../../lib/crypto.js';
import { invalidField } from '../../lib/errors.js';

/** Largest accepted upload, in bytes (spec decisions: 10 MB). */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
/** Images declaring more pixels than this are refused before decoding (a small file can declare a huge canvas). */
export const MAX_INPUT_PIXELS = 40_000_000;
/** Stored images are scaled down to fit this many pixels on their longest side. */
export const MAX_OUTPUT_SIDE = 4096;

type Format = 'jpeg' | 'png' | 'webp';

const FORMATS = {
  jpeg: { ext: 'jpg', contentType: 'image/jpeg' },
  png: { ext: 'png', contentType: 'image/png' },
  webp: { ext: 'webp', contentType: 'image/webp' },
} as const satisfies Record<Format, { ext: string; contentType: string }>;

export interface ProcessedImage {
  data: Buffer;
  ext: 'jpg' | 'png' | 'webp';
  contentType: string;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The format by its magic bytes, whatever the client called the file or its type. */
function sniff(input: Buffer): Format | undefined {
  if (input.length >= 3 && input[0] === 0xff && input[1] === 0xd8 && input[2] === 0xff) return 'jpeg';
  if (input.length >= 8 && input.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (input.length >= 12 && input.toString('latin1', 0, 4) === 'RIFF' && input.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

const notAnImage = () => invalidField('file', 'must be a JPEG, PNG or WebP image');
/** sharp (a native image library), loaded with the first image, not at every start (docs/architecture.md, "Testing"). */
let loaded: Promise<typeof sharpType> | undefined;
const loadSharp = () => (loaded ??= import('sharp').then((m) => m.default));

const tooManyPixels = () => invalidField('file', 'has too many pixels');
const unreadable = () => invalidField('file', 'is not a readable image');

/**
 * Re-encodes an uploaded image: the EXIF orientation is applied, the longest side is capped at
 * 4096 px, and nothing of the original's metadata survives (no EXIF, GPS, ICC or XMP: sharp
 * writes none unless asked with keepExif/withMetadata, which must never be called here).
 */
export async function processImage(input: Buffer): Promise<ProcessedImage> {
  const format = sniff(input);
  if (!format) throw notAnImage();
  const sharp = await loadSharp();

  // The header alone gives the dimensions: refuse a pixel bomb before decoding anything.
  let declared: Metadata;
  try {
    declared = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    throw unreadable();
  }
  if (declared.format !== format) throw unreadable();
  if (declared.width * declared.height > MAX_INPUT_PIXELS) throw tooManyPixels();

  const pipeline = sharp(input, { limitInputPixels: MAX_INPUT_PIXELS })
    .rotate()
    .resize({ width: MAX_OUTPUT_SIDE, height: MAX_OUTPUT_SIDE, fit: 'inside', withoutEnlargement: true });
  switch (format) {
    case 'jpeg':
      pipeline.jpeg({ quality: 85, mozjpeg: false });
      break;
    case 'png':
      pipeline.png();
      break;
    case 'webp':
      pipeline.webp({ quality: 85 });
      break;
  }

  try {
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
    return { data, ...FORMATS[format], width: info.width, height: info.height };
  } catch (err) {
    // The metadata check above catches pixel bombs; this is sharp's own limit as a second line.
    if (err instanceof Error && /pixel limit/i.test(err.message)) throw tooManyPixels();
    throw unreadable();
  }
}

/** Re-encodes and stores an image under an unguessable key (192 random bits); answers its public URL. */
export async function storeUpload(ctx: AppContext, file: Buffer): Promise<{ image_url: string }> {
  const image = await processImage(file);
  const key = `${randomToken(24)}.${image.ext}`;
  await ctx.storage.put(key, image.data, image.contentType);
  return { image_url: `${ctx.config.publicUrl}/uploads/${key}` };
}

/** A stored upload, or undefined for an unknown or malformed key. */
export function readUpload(ctx: AppContext, key: string): Promise<{ data: Buffer; contentType: string } | undefined> {
  return ctx.storage.get(key);
}
