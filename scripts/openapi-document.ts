// Prints the OpenAPI document of the app as the server would serve it, from a throwaway SQLite
// database and a fixed PUBLIC_URL, so the output depends only on the code.
// `tsx scripts/openapi-document.ts [out.json]`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';

export const DOCUMENT_URL = 'https://muster.example.org';

export async function openApiDocument(): Promise<unknown> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-openapi-'));
  try {
    const config = loadConfig({ LOG_LEVEL: 'silent', PUBLIC_URL: DOCUMENT_URL, DATA_DIR: dataDir });
    const ctx = await createContext(config);
    const app = await buildApp(ctx);
    try {
      const res = await app.inject({ url: '/v1/openapi.json' });
      if (res.statusCode !== 200) throw new Error(`/v1/openapi.json answered ${res.statusCode}`);
      return res.json();
    } finally {
      await app.close();
      await ctx.close();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('openapi-document.ts')) {
  const text = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
  const out = process.argv[2];
  if (out) fs.writeFileSync(out, text);
  else process.stdout.write(text);
}
