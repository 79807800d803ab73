import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler';

/**
 * Response serialisers shared by every app this process builds. Fastify compiles one
 * fast-json-stringify function per route and status at start; the schemas are module constants,
 * so an app built again (the tests build one per file, often more) takes the functions compiled
 * before instead of compiling them again. Keyed by the external schemas (addSchema) and options,
 * then by the response schema object itself: a compiled function depends on nothing else.
 */
const selector = SerializerSelector();
const pools = new Map<string, { compile: ReturnType<SerializerFactory>; cache: WeakMap<object, Serializer> }>();

export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const key = JSON.stringify([externalSchemas ?? null, options ?? null]);
  let pool = pools.get(key);
  if (!pool) {
    pool = { compile: selector(externalSchemas, options), cache: new WeakMap() };
    pools.set(key, pool);
  }
  const { compile, cache } = pool;
  return (route) => {
    const schema = route.schema;
    if (typeof schema !== 'object' || schema === null) return compile(route);
    let serialize = cache.get(schema);
    if (!serialize) {
      // Compiled on the first answer of this route and status, not at start (as the validators,
      // src/plugins/validation.ts): a start compiled a serialiser for every route and status.
      let compiled: Serializer | undefined;
      serialize = (data) => (compiled ??= compile(route))(data);
      cache.set(schema, serialize);
    }
    return serialize;
  };
};
