import fs from 'node:fs';
import path from 'node:path';
import { printSchema } from 'graphql';
import { buildGraphqlSchema } from './schema';

export const SCHEMA_FILE = path.resolve(__dirname, '..', '..', ...(__dirname.includes(`${path.sep}dist${path.sep}`) ? ['..'] : []), 'schema.graphql');

export async function printedSchema(): Promise<string> {
  return `${printSchema(await buildGraphqlSchema())}\n`;
}

if (require.main === module) {
  printedSchema()
    .then((text) => {
      fs.writeFileSync(SCHEMA_FILE, text);
      process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
    })
    .catch((err) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    });
}
