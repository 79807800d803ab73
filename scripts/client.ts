// The typed TypeScript client under clients/typescript: the OpenAPI document the server serves
// (openapi.json) and its types (schema.ts, by openapi-typescript), which index.ts hands to
// openapi-fetch. `npm run client:generate` writes both; `npm run client:check` (CI) fails when
// either differs from what the code would generate now.
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { openApiDocument } from './openapi-document.js';

const dir = path.resolve(import.meta.dirname, '../clients/typescript');
const HEADER = `${COMMENT_HEADER}// Generated from openapi.json by \`npm run client:generate\`. Do not edit.\n\n`;

async function generate(): Promise<Record<string, string>> {
  const doc = await openApiDocument();
  const json = `${JSON.stringify(doc, null, 2)}\n`;
  const ast = await openapiTS(JSON.parse(json) as Parameters<typeof openapiTS>[0], {
    rootTypes: true,
    rootTypesNoSchemaPrefix: true,
    alphabetize: true,
    silent: true,
  });
  return { 'openapi.json': json, 'schema.ts': HEADER + astToString(ast) };
}

const files = await generate();
if (process.argv.includes('--check')) {
  const stale = Object.entries(files).filter(([name, text]) => {
    const file = path.join(dir, name);
    return !fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text;
  });
  if (stale.length > 0) {
    console.error(`clients/typescript is out of date (${stale.map(([n]) => n).join(', ')}): run \`npm run client:generate\` and commit the result.`);
    process.exit(1);
  }
  console.log('clients/typescript is current');
} else {
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  console.log(`wrote ${Object.keys(files).map((n) => `clients/typescript/${n}`).join(', ')}`);
}
