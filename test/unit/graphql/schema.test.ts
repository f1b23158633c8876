import fs from 'node:fs';
import path from 'node:path';
import { printedSchema } from '../../../src/graphql/print-schema';

describe('schema.graphql', () => {
  it('matches the schema built from the code (run `npm run schema:print` after changing it)', async () => {
    const onDisk = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'schema.graphql'), 'utf8');
    expect(onDisk).toBe(await printedSchema());
  });

  it('warns in the rotateKeys documentation that the new keys are shown only in its answer', async () => {
    const printed = await printedSchema();
    const doc = /"""([^"]*)"""\s*rotateKeys\(/.exec(printed)?.[1]?.replace(/\s+/g, ' ') ?? '';
    expect(doc).toContain('The new keys are shown only in this answer');
    expect(doc).toContain('Copy them now');
  });
});
