import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { SecretBox } from '../crypto/secret-box';
import type { OutgoingMail } from '../mail/mailer';

/** What an email of the team is about. */
export type TeamMailKind = 'invitation' | 'password_reset';

/** An email a sender holds the lease of, its body opened. */
export interface ClaimedEmail {
  id: string;
  kind: TeamMailKind;
  subsidiaryId: number | null;
  recipient: string;
  /** Attempts so far, this one included. */
  attempts: number;
  /** The lease, as stored: marking a retry or a failure requires still holding it. */
  lease: Date;
  /** Null when the sealed body could not be opened (another master key): the email cannot be sent. */
  mail: OutgoingMail | null;
}

/** The associated data of a sealed body (by the row's id): a body copied to another row does not open. */
export const emailBodyContext = (id: number | string): string => `email-outbox:${id}`;

/**
 * The table of the team's emails (`email_outbox`). An email is queued in the transaction that
 * makes what it announces, so it exists exactly when that change committed. The body (it holds
 * the invitation or reset link) is sealed under the master key and cleared once the email is
 * sent or given up; recipient and subject stay, for the record. Times are the database's.
 */
export class EmailOutbox {
  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: SecretBox,
  ) {}

  /** Queues `mail` in `em`'s transaction; answers its id. */
  async queue(
    em: EntityManager,
    email: { kind: TeamMailKind; subsidiaryId: number | null; environmentId?: number | null; mail: OutgoingMail },
  ): Promise<string> {
    const connection = em.getConnection();
    // The id first: the body is sealed in the row's own context.
    const [next]: { id: string }[] = await connection.execute(`select nextval('email_outbox_id_seq') as id`, [], 'all', em.getTransactionContext());
    const id = String(next!.id);
    const sealed = this.secrets.seal(JSON.stringify({ text: email.mail.text, html: email.mail.html }), emailBodyContext(id));
    await connection.execute(
      `insert into email_outbox (id, kind, subsidiary_id, environment_id, recipient, subject, body_sealed) values (?, ?, ?, ?, ?, ?, ?)`,
      [id, email.kind, email.subsidiaryId, email.environmentId ?? null, email.mail.to, email.mail.subject, sealed],
      'run',
      em.getTransactionContext(),
    );
    return id;
  }

  /**
   * Leases up to `max` due emails (only those of `ids` when given) for `leaseMs`, counting the
   * attempt; rows another sender is claiming are skipped (FOR UPDATE SKIP LOCKED) and rows under
   * another sender's lease are not due, so two senders never hold the same email at once.
   */
  async claim(max: number, leaseMs: number, ids?: string[]): Promise<ClaimedEmail[]> {
    if (ids && ids.length === 0) return [];
    const only = ids ? ` and id in (${ids.map(() => '?').join(', ')})` : '';
    const rows: {
      id: string | number;
      kind: TeamMailKind;
      subsidiary_id: number | null;
      recipient: string;
      subject: string;
      body_sealed: string | null;
      attempts: number;
      lease_until: Date | string;
    }[] = await this.orm.em.getConnection().execute(
      `update email_outbox o
          set lease_until = date_trunc('milliseconds', clock_timestamp()) + ? * interval '1 millisecond', attempts = o.attempts + 1
         from (select id from email_outbox
                where sent_at is null and failed_at is null and next_attempt_at <= clock_timestamp()
                  and (lease_until is null or lease_until <= clock_timestamp())${only}
                order by next_attempt_at, id
                limit ?
                for update skip locked) due
        where o.id = due.id
        returning o.id, o.kind, o.subsidiary_id, o.recipient, o.subject, o.body_sealed, o.attempts, o.lease_until`,
      [leaseMs, ...(ids ?? []), max],
    );
    return rows.map((r) => ({
      id: String(r.id),
      kind: r.kind,
      subsidiaryId: r.subsidiary_id,
      recipient: r.recipient,
      attempts: r.attempts,
      lease: new Date(r.lease_until),
      mail: this.open(r),
    }));
  }

  /** The server accepted it: sent, and the body (its link) is cleared. */
  async markSent(id: string): Promise<void> {
    await this.orm.em
      .getConnection()
      .execute(
        `update email_outbox set sent_at = clock_timestamp(), body_sealed = null, lease_until = null, last_error = null where id = ? and sent_at is null`,
        [id],
      );
  }

  /** Tried again after `delayMs`; false when the lease was lost (another sender has it now). */
  async markRetry(email: ClaimedEmail, error: string, delayMs: number): Promise<boolean> {
    const rows: unknown[] = await this.orm.em.getConnection().execute(
      `update email_outbox set next_attempt_at = clock_timestamp() + ? * interval '1 millisecond', lease_until = null, last_error = ?
        where id = ? and lease_until = ? and sent_at is null and failed_at is null returning id`,
      [delayMs, error, email.id, email.lease],
    );
    return rows.length === 1;
  }

  /**
   * Given up: failed, body cleared, and `then` runs in the same transaction (the audit entry),
   * once: only the holder of the lease marks it. False when the lease was lost.
   */
  async markFailed(email: ClaimedEmail, error: string, then: (em: EntityManager) => Promise<void>): Promise<boolean> {
    return this.orm.em.fork().transactional(async (em) => {
      const rows: unknown[] = await em.getConnection().execute(
        `update email_outbox set failed_at = clock_timestamp(), body_sealed = null, lease_until = null, last_error = ?
          where id = ? and lease_until = ? and sent_at is null and failed_at is null returning id`,
        [error, email.id, email.lease],
        'all',
        em.getTransactionContext(),
      );
      if (rows.length !== 1) return false;
      await then(em);
      return true;
    });
  }

  /**
   * Deletes up to `max` emails sent or given up more than `retentionDays` ago, oldest first, in
   * one statement (rows another purge is deleting are skipped); answers how many. Emails still
   * queued or being retried are never deleted, however old. The cutoff is from now() (stable),
   * not clock_timestamp(): so it is a range of email_outbox_settled_index, not a filter.
   */
  async purgeSettled(retentionDays: number, max: number): Promise<number> {
    const rows: unknown[] = await this.orm.em.getConnection().execute(
      `delete from email_outbox where id in (
         select id from email_outbox
          where (sent_at is not null or failed_at is not null)
            and coalesce(sent_at, failed_at) < now() - ? * interval '1 day'
          order by coalesce(sent_at, failed_at)
          limit ?
          for update skip locked)
       returning id`,
      [retentionDays, max],
    );
    return rows.length;
  }

  private open(row: { id: string | number; recipient: string; subject: string; body_sealed: string | null }): OutgoingMail | null {
    if (row.body_sealed === null) return null;
    try {
      const body = JSON.parse(this.secrets.open(row.body_sealed, emailBodyContext(row.id))) as { text: string; html: string };
      return { to: row.recipient, subject: row.subject, text: body.text, html: body.html };
    } catch {
      return null;
    }
  }
}
