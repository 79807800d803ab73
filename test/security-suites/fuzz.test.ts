// Fuzzing of every documented operation (see fuzz-core.ts). Seed: FUZZ_SEED, default 20261122.
import { fuzzSuite } from './fuzz-core.js';

fuzzSuite('schema-driven fuzz, all operations', () => true);
