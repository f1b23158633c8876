import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_initial } from './Migration20261121000000_initial';
import { Migration20261121000100_fees_idempotency_sandbox } from './Migration20261121000100_fees_idempotency_sandbox';

/** Every migration, in order. Listed explicitly so the same code runs compiled, under Jest and in both database modes. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261121000000_initial', class: Migration20261121000000_initial },
  { name: 'Migration20261121000100_fees_idempotency_sandbox', class: Migration20261121000100_fees_idempotency_sandbox },
];
