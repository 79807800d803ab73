import { Type } from '@sinclair/typebox';
import { Email } from '../../lib/schemas.js';
import { MeResponse } from '../users/index.js';

export const LoginBody = Type.Object({
  email: Email,
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

export const LoginResponse = Type.Object({ user: MeResponse }, { title: 'LoginResult', description: 'The user just signed in; the session cookie comes with it' });

export const MagicLinkBody = Type.Object({ email: Email });

export const MagicVerifyBody = Type.Object({
  email: Email,
  code: Type.String({ pattern: '^[0-9]{6}$', description: 'The six digits from the email' }),
});

const Code = Type.String({ pattern: '^[0-9]{6}$', description: 'The six digits from the email' });
const NewPassword = Type.String({ minLength: 8, maxLength: 1024, description: 'At least 8 characters' });

export const ChangePasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 1024 }),
  new_password: NewPassword,
});

export const PasswordResetBody = Type.Object({ email: Email });

export const PasswordResetVerifyBody = Type.Object({ email: Email, code: Code, new_password: NewPassword });

export const VerifyEmailBody = Type.Object({ email: Email, code: Code });
