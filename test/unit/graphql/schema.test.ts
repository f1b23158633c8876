import fs from 'node:fs';
import path from 'node:path';
import { printedSchema } from '../../../src/graphql/print-schema';

describe('schema.graphql', () => {
  it('matches the schema built from the code (run `npm run schema:print` after changing it)', async () => {
    const onDisk = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'schema.graphql'), 'utf8');
    expect(onDisk).toBe(await printedSchema());
  });
});
