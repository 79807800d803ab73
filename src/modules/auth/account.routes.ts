import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../../context.js';
import { throttled } from '../../lib/account-throttle.js';
import { OkResponse } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import { resendVerification, verifyEmail } from './email-verification.js';
import { toMe } from '../users/index.js';
import { ChangePasswordBody, LoginResponse, MagicLinkBody, PasswordResetBody, PasswordResetVerifyBody, VerifyEmailBody } from './auth.schemas.js';
import { sessionTokenOf } from './session-cookie.js';
import type { Guard } from './guard.js';
import { changePassword, requestPasswordReset, resetPassword } from './password.service.js';
import { startSession } from './sessions.js';

const tags = ['Authentication'];

/** The per-account throttle of one request (it answers 429 with the reply's Retry-After). */
export const guardOf =
  (ctx: AppContext, reply: FastifyReply): Guard =>
  (door, email, run) =>
    throttled(ctx, reply, door, email, run);

/** Password change and reset, email verification (issue #14). */
export const accountRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/auth/password',
    {
      schema: {
        tags,
        summary: 'Change the password (ends every other session; keys stay)',
        body: ChangePasswordBody,
        response: { 200: OkResponse },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      const keep = actor.via === 'session' ? sessionTokenOf(request) : undefined;
      await changePassword(ctx, guardOf(ctx, reply), actor, request.body, keep);
      return { ok: true };
    },
  );

  app.post(
    '/v1/auth/password-reset',
    { config: { public: true }, schema: { tags, summary: 'Email a password reset code (always answers ok)', body: PasswordResetBody, response: { 200: OkResponse } } },
    async (request) => {
      await requestPasswordReset(ctx, request.body.email);
      return { ok: true };
    },
  );

  app.post(
    '/v1/auth/password-reset/verify',
    {
      config: { public: true },
      schema: { tags, summary: 'Set a new password with the emailed code and sign in', body: PasswordResetVerifyBody, response: { 200: LoginResponse } },
    },
    async (request, reply) => {
      const user = await resetPassword(ctx, guardOf(ctx, reply), request.body);
      await startSession(ctx, reply, user.id);
      return { user: toMe(ctx, user) };
    },
  );

  app.post(
    '/v1/auth/verify-email',
    { config: { public: true }, schema: { tags, summary: 'Prove an email address with its emailed code', body: VerifyEmailBody, response: { 200: OkResponse } } },
    async (request, reply) => {
      await verifyEmail(ctx, guardOf(ctx, reply), request.body.email, request.body.code);
      return { ok: true };
    },
  );

  app.post(
    '/v1/auth/verify-email/resend',
    { config: { public: true }, schema: { tags, summary: 'Email a new confirmation code (always answers ok)', body: MagicLinkBody, response: { 200: OkResponse } } },
    async (request) => {
      await resendVerification(ctx, request.body.email);
      return { ok: true };
    },
  );
};
