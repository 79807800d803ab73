import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { OkResponse } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import { MeResponse, UpdateMeBody } from '../users/index.js';
import { getMe, heldMe, toMe, updateMe } from '../users/index.js';
import { LoginBody, LoginResponse, MagicLinkBody, MagicVerifyBody } from './auth.schemas.js';
import { sessionTokenOf } from './session-cookie.js';
import { guardOf } from './account.routes.js';
import { checkPassword } from './login.service.js';
import { requestMagicCode, verifyMagicCode } from './magic-link.service.js';
import { endSession, startSession } from './sessions.js';

const tags = ['Authentication'];

export const authRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/auth/login',
    { config: { public: true }, schema: { tags, summary: 'Log in with email and password', body: LoginBody, response: { 200: LoginResponse } } },
    async (request, reply) => {
      const user = await checkPassword(ctx, guardOf(ctx, reply), request.body.email, request.body.password);
      await startSession(ctx, reply, user.id);
      return { user: toMe(ctx, user) };
    },
  );

  app.post(
    '/v1/auth/logout',
    { config: { public: true }, schema: { tags, summary: 'End the session of the cookie', response: { 200: OkResponse } } },
    async (request, reply) => {
      await endSession(ctx, reply, sessionTokenOf(request));
      return { ok: true };
    },
  );

  // Answered without a promise when the user's row is held (Fastify sends a plain value at once: no microtask turns).
  app.get('/v1/auth/me', { schema: { tags, summary: 'The signed-in user', response: { 200: MeResponse } } }, (request) => {
    const actor = actorOf(request);
    return heldMe(ctx, actor) ?? getMe(ctx, actor);
  });

  app.patch(
    '/v1/auth/me',
    { schema: { tags, summary: 'Edit name, time zone or phone', body: UpdateMeBody, response: { 200: MeResponse } } },
    (request) => updateMe(ctx, actorOf(request), request.body),
  );

  app.post(
    '/v1/auth/magic-link',
    {
      config: { public: true },
      schema: { tags, summary: 'Email a six-digit sign-in code (always answers ok)', body: MagicLinkBody, response: { 200: OkResponse } },
    },
    async (request) => {
      await requestMagicCode(ctx, request.body.email);
      return { ok: true };
    },
  );

  app.post(
    '/v1/auth/magic-link/verify',
    { config: { public: true }, schema: { tags, summary: 'Log in with the emailed code', body: MagicVerifyBody, response: { 200: LoginResponse } } },
    async (request, reply) => {
      const user = await verifyMagicCode(ctx, guardOf(ctx, reply), request.body.email, request.body.code);
      await startSession(ctx, reply, user.id);
      return { user: toMe(ctx, user) };
    },
  );
};
