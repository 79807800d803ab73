import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../lib/schemas.js';

export const ModeSchema = StringEnum(['live', 'test']);

export const CreateApiKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  mode: ModeSchema,
});

export const ApiKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  mode: ModeSchema,
  livemode: Type.Boolean(),
  redacted: Type.String({ description: 'Prefix and last four characters, e.g. sk_test_...a1B2' }),
  created_at: Type.String(),
}, { title: 'ApiKey', description: 'An API key as listed: never its secret' });

export const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'The secret. Shown once: only its hash is stored.' }),
}, { title: 'CreatedApiKey', description: 'A new key: the secret `key` is shown this once' });

export const ListApiKeysResponse = Type.Object({ api_keys: Type.Array(ApiKey) }, { title: 'ApiKeyList' });

export const RevokedApiKey = Type.Object({ id: Type.Integer(), revoked: Type.Boolean() });
