import type { MikroORM } from '@mikro-orm/postgresql';
import { CHECK_CONTEXT, CHECK_PLAINTEXT, MasterKeyMismatchError } from '../crypto/master-key';
import { SecretBox } from '../crypto/secret-box';
import { SIGNING_SECRET_STORE } from './webhook-secret.service';
import { TOTP_SECRET_STORE } from './member-totp.service';
import { emailBodyContext } from './email-outbox';

/**
 * Every column holding a value sealed under MASTER_KEY, with the context (associated data) its
 * rows are sealed with. A new sealed column must be added here, or rotation would leave it under
 * the old key (a test compares this list with the migrations).
 */
export const SEALED_COLUMNS = [
  // The webhook signing secrets: live, and test (null until first needed for older merchants).
  { table: 'subsidiary', key: 'id', column: SIGNING_SECRET_STORE.live.column, context: SIGNING_SECRET_STORE.live.context },
  { table: 'subsidiary', key: 'id', column: SIGNING_SECRET_STORE.test.column, context: SIGNING_SECRET_STORE.test.context },
  { table: 'encryption_key', key: 'id', column: 'private_key_sealed', context: (id: number) => `encryption-key:${id}` },
  // The secrets a rotation replaced, still signing during their overlap (one row per merchant and environment).
  { table: SIGNING_SECRET_STORE.live.previousTable, key: 'subsidiary_id', column: 'secret_sealed', context: SIGNING_SECRET_STORE.live.context },
  { table: SIGNING_SECRET_STORE.test.previousTable, key: 'subsidiary_id', column: 'secret_sealed', context: SIGNING_SECRET_STORE.test.context },
  // Members' TOTP secrets: on, and waiting for the first code of an enrolment.
  { table: 'merchant_member', key: 'id', column: TOTP_SECRET_STORE.active.column, context: TOTP_SECRET_STORE.active.context },
  { table: 'merchant_member', key: 'id', column: TOTP_SECRET_STORE.pending.column, context: TOTP_SECRET_STORE.pending.context },
  // The bodies of team emails not yet sent (they hold invitation and password-reset links).
  { table: 'email_outbox', key: 'id', column: 'body_sealed', context: (id: number) => emailBodyContext(id) },
] as const;

export interface MasterKeyRotation {
  /** Rows re-sealed, per `table.column`. */
  resealed: Record<string, number>;
}

/**
 * Re-seals every sealed secret and the master-key check value under `newKey`, in one
 * transaction: either every secret opens with the new key afterwards or nothing changed.
 * The tables are locked against writes meanwhile, so no secret sealed under the old key is
 * added halfway. Instances still running with the old key cannot open the re-sealed secrets:
 * stop them first and start them with the new key (docs/operations.md).
 */
export async function rotateMasterKey(orm: MikroORM, oldKey: Buffer, newKey: Buffer): Promise<MasterKeyRotation> {
  if (oldKey.equals(newKey)) throw new Error('the new master key is the current one');
  const before = new SecretBox(oldKey);
  const after = new SecretBox(newKey);
  return orm.em.fork().transactional(async (em) => {
    const connection = em.getConnection();
    const trx = em.getTransactionContext();
    const sql = (query: string, params: unknown[] = []) => connection.execute(query, params, 'all', trx) as Promise<Array<Record<string, any>>>;

    await sql(`lock table ${[...new Set(SEALED_COLUMNS.map((c) => c.table)), 'master_key_check'].map((t) => `"${t}"`).join(', ')} in exclusive mode`);
    const [check] = await sql('select check_value from master_key_check where id = 1');
    if (check) {
      let opened: string | undefined;
      try {
        opened = before.open(check.check_value, CHECK_CONTEXT);
      } catch {
        opened = undefined;
      }
      if (opened !== CHECK_PLAINTEXT) throw new MasterKeyMismatchError('the check value does not open with the current key');
    }

    const resealed: Record<string, number> = {};
    for (const { table, key, column, context } of SEALED_COLUMNS) {
      const rows = await sql(`select "${key}" as id, "${column}" as sealed from "${table}" where "${column}" is not null order by "${key}"`);
      for (const row of rows) {
        const id = Number(row.id);
        let plaintext: string;
        try {
          plaintext = before.open(row.sealed, context(id));
        } catch {
          throw new MasterKeyMismatchError(`${table} ${id}: its ${column} does not open with the current key; nothing was changed`);
        }
        await sql(`update "${table}" set "${column}" = ? where "${key}" = ?`, [after.seal(plaintext, context(id)), id]);
      }
      resealed[`${table}.${column}`] = rows.length;
    }
    await sql(
      'insert into master_key_check (id, check_value) values (1, ?) on conflict (id) do update set check_value = excluded.check_value, created_at = now()',
      [after.seal(CHECK_PLAINTEXT, CHECK_CONTEXT)],
    );
    return { resealed };
  });
}
