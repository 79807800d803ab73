import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import * as service from './uploads.service.js';

const tags = ['Uploads'];

/** The whole request: the file plus multipart framing and a few small fields. */
const BODY_LIMIT = 11 * 1024 * 1024;

const payloadTooLarge = () => new AppError(413, 'payload_too_large', 'Payload too large');

// Documentation only: the body is a multipart stream read by the handler, so Fastify never has a
// parsed body to validate. Without `type`, this schema accepts that absent body.
const UploadBody = Type.Unsafe<unknown>({
  properties: { file: { type: 'string', format: 'binary', description: 'JPEG, PNG or WebP, at most 10 MB' } },
  required: ['file'],
});

const UploadedImage = Type.Object({
  image_url: Type.String({ description: 'Public, unguessable URL of the re-encoded image (EXIF and GPS removed)' }),
});

/** What reading the multipart stream can fail with, in the error contract's terms. */
function multipartError(err: unknown): unknown {
  if (err instanceof AppError || !(err instanceof Error)) return err;
  const { code, statusCode } = err as Error & { code?: string; statusCode?: number };
  // FST_REQ_FILE_TOO_LARGE, and the parts/files/fields limits: all 413.
  if (statusCode === 413) return payloadTooLarge();
  // busboy's own failures (no boundary, truncated or garbled body) carry no status.
  if (statusCode === undefined && code === undefined) return new AppError(400, 'bad_request', 'Malformed multipart body');
  return err;
}

export const uploadsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // This plugin is an encapsulated context: multipart is understood here and nowhere else (every
  // other route keeps answering 415), and here nothing but multipart is parsed (a JSON body is 415
  // before it is read).
  app.removeAllContentTypeParsers();
  await app.register(multipart, {
    limits: { fileSize: service.MAX_UPLOAD_BYTES, files: 1, fields: 5, parts: 10 },
  });

  app.post(
    '/v1/upload',
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        tags,
        summary: 'Upload a photo (JPEG, PNG or WebP, at most 10 MB)',
        description:
          'A `multipart/form-data` body with the image in the field `file`. The format is checked by content; the image is re-encoded without any metadata, its EXIF orientation applied, scaled to fit 4096 px.',
        consumes: ['multipart/form-data'],
        body: UploadBody,
        response: { 201: UploadedImage },
      },
    },
    async (request, reply) => {
      // bodyLimit does not reach a streamed multipart body: refuse a declared oversize at once.
      if (Number(request.headers['content-length']) > BODY_LIMIT) throw payloadTooLarge();
      if (!request.isMultipart()) throw new AppError(415, 'unsupported_media_type', 'Unsupported media type');

      let data: Buffer;
      try {
        const part = await request.file();
        if (!part) throw invalidField('file', 'is required');
        if (part.fieldname !== 'file') {
          part.file.resume(); // drain it: the request must still be read to its end
          throw invalidField('file', 'is required');
        }
        data = await part.toBuffer();
        // toBuffer() misses the limit when busboy reaches it on a chunk boundary (it then pushes
        // nothing more and ends the stream: fastify-multipart#383); `truncated` is always set.
        if (part.file.truncated) throw payloadTooLarge();
      } catch (err) {
        throw multipartError(err);
      }
      return reply.status(201).send(await service.storeUpload(ctx, data));
    },
  );

  app.get(
    '/uploads/:key',
    { config: { public: true }, schema: { hide: true, params: Type.Object({ key: Type.String() }) } },
    async (request, reply) => {
      const found = await service.readUpload(ctx, request.params.key);
      if (!found) throw notFound();
      return reply
        .header('content-type', found.contentType)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('content-disposition', 'inline')
        .send(found.data);
    },
  );
};
