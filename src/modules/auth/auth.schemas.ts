import { Type } from '@sinclair/typebox';
import { Email } from '../../lib/schemas.js';
import { MeResponse } from '../users/users.schemas.js';

export const LoginBody = Type.Object({
  email: Email,
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

export const LoginResponse = Type.Object({ user: MeResponse });

export const MagicLinkBody = Type.Object({ email: Email });

export const MagicVerifyBody = Type.Object({
  email: Email,
  code: Type.String({ pattern: '^[0-9]{6}$', description: 'The six digits from the email' }),
});
