import fs from 'node:fs';
import path from 'node:path';

/** What the landing page shows of the demo (no secrets): kept in DATA_DIR/demo.json by the first-run seeder. */
export interface DemoRecord {
  merchantId: number;
  paymentLinkUrl: string;
  paymentLinkReference: string;
}

export const DEMO_FILE = 'demo.json';

/** The demo record of a data directory, if the first run seeded one; a reader with no dependency on the application. */
export function readDemoRecord(dataDir: string): DemoRecord | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(path.join(dataDir, DEMO_FILE), 'utf8')) as Partial<DemoRecord>;
    if (typeof record.paymentLinkUrl === 'string' && typeof record.paymentLinkReference === 'string') return record as DemoRecord;
  } catch {
    /* no demo */
  }
  return undefined;
}
