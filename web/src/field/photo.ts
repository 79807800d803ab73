// A photo is resized in the browser before it is sent: longest side at most 1280 px (never
// upscaled), JPEG at quality 0.82. createImageBitmap applies the EXIF orientation itself (so the
// picture is not rotated again here), and the canvas is made straight at the target size, which
// keeps it far below iOS's 16.7-megapixel canvas limit.
export const MAX_SIDE = 1280;
export const QUALITY = 0.82;

export interface Resized {
  blob: Blob;
  width: number;
  height: number;
}

export function targetSize(width: number, height: number, max = MAX_SIDE): { width: number; height: number } {
  const scale = Math.min(1, max / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

async function decode(file: Blob): Promise<{ source: CanvasImageSource; width: number; height: number; close(): void }> {
  if ('createImageBitmap' in window) {
    try {
      const bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' });
      return { source: bitmap, width: bitmap.width, height: bitmap.height, close: () => bitmap.close() };
    } catch {
      /* an engine without the options argument, or a format it only decodes in <img> */
    }
  }
  // Otherwise an <img> (which also honours EXIF orientation in current engines).
  const url = URL.createObjectURL(file);
  const img = new Image();
  img.src = url;
  await img.decode();
  return { source: img, width: img.naturalWidth, height: img.naturalHeight, close: () => URL.revokeObjectURL(url) };
}

export async function resizePhoto(file: Blob): Promise<Resized> {
  let decoded;
  try {
    decoded = await decode(file);
  } catch {
    throw new Error('This file could not be read as a picture.');
  }
  try {
    const { width, height } = targetSize(decoded.width, decoded.height);
    const canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    const g = canvas.getContext('2d');
    if (!g) throw new Error('This browser cannot resize pictures.');
    g.imageSmoothingEnabled = true;
    g.imageSmoothingQuality = 'high';
    g.drawImage(decoded.source, 0, 0, width, height);
    const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', QUALITY));
    if (!blob) throw new Error('The picture could not be encoded.');
    canvas.width = canvas.height = 0; // free the pixels at once (iOS counts canvas memory)
    return { blob, width, height };
  } finally {
    decoded.close();
  }
}
