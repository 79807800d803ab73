import { hash, verify } from '@node-rs/argon2';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  /** Spends the same time as a real verify, so an unknown email cannot be told apart by timing. */
  verifyDummy(password: string): Promise<void>;
}

// OWASP's Argon2id setting: 19 MiB memory, 2 iterations, 1 lane.
// algorithm 2 is Argon2id (the package's const enum cannot be imported under verbatimModuleSyntax).
const PASSWORD_OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** Argon2id's cost: memory in KiB and iterations. */
export interface PasswordCost {
  memoryCost: number;
  timeCost: number;
}

/**
 * The service's hasher: OWASP's setting unless told. Only the test harness passes a lower cost
 * (test/helpers.ts: thousands of sign-ups a run); a stored hash carries its own cost, so verify
 * reads any.
 */
export function createPasswordHasher(cost: PasswordCost = PASSWORD_OPTIONS): PasswordHasher {
  const OPTIONS = { ...PASSWORD_OPTIONS, ...cost };
  let dummy: Promise<string> | undefined;
  return {
    hash: (password) => hash(password, OPTIONS),
    verify: async (stored, password) => {
      try {
        return await verify(stored, password);
      } catch {
        return false;
      }
    },
    verifyDummy: async (password) => {
      dummy ??= hash('muster-timing-equaliser', OPTIONS);
      await verify(await dummy, password).catch(() => false);
    },
  };
}
