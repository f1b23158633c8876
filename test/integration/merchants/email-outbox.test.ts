import { startTestService, type TestService } from '../../support/service';
import { createScratchDatabase } from '../../support/scratch-database';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp';
import { waitFor } from '../events/helpers';
import { DomainError } from '../../../src/shared/errors';
import { EmailOutbox } from '../../../src/merchants/email-outbox';
import { SecretBox, parseMasterKey } from '../../../src/crypto/secret-box';
import { TEST_MASTER_KEY } from '../../support/database';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const INVITE = `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { invitationUrl } }`;

const invite = async (t: TestService, m: CreatedMerchant, email: string) => {
  const r = await request(t.baseUrl, 'POST', '/graphql', {
    apiKey: m.keys.test.privateKey,
    body: { query: INVITE, variables: { input: { email, role: 'VIEWER' } } },
  });
  expect(r.body.errors).toBeUndefined();
  return r.body.data.inviteMember.invitationUrl as string;
};

type Row = { recipient: string; attempts: number; sent_at: Date | null; failed_at: Date | null; body_sealed: string | null; last_error: string | null };
const rowsTo = (t: TestService, recipient: string): Promise<Row[]> =>
  t.service.runtime.ctx.orm.em
    .fork()
    .getConnection()
    .execute(`select recipient, attempts, sent_at, failed_at, body_sealed, last_error from email_outbox where recipient = ?`, [recipient]);

/** The team's emails go through the email_outbox table: queued with their link, sent by a sender that leases them. */
describe('team emails are durable (email_outbox)', () => {
  let smtp: TestSmtpServer;
  // The senders here send every due email of their database: a database of this file's own,
  // so that they never send another file's emails, nor another file's senders these.
  let scratch: { url: string; drop(): Promise<void> } | undefined;
  const start = (env: Record<string, string>) => startTestService({ DATABASE_URL: scratch!.url, ...env });
  beforeAll(async () => {
    scratch = await createScratchDatabase('email_outbox');
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await smtp?.close();
    await scratch?.drop();
  });

  it('an invitation committed by an instance stopped before sending is emailed by the next instance; its body is sealed while queued and cleared once sent', async () => {
    // EMAIL_POLL_INTERVAL_MS=0: this instance queues but never sends (as if killed right after the commit).
    const first = await start({ SMTP_URL: smtp.url, EMAIL_POLL_INTERVAL_MS: '0' });
    let url: string;
    try {
      const m = await createTestMerchant(first);
      url = await invite(first, m, 'survivor@outbox.test');
      const [queued] = await rowsTo(first, 'survivor@outbox.test');
      expect(queued).toMatchObject({ attempts: 0, sent_at: null });
      // Sealed: the link is not in the row in clear.
      expect(queued!.body_sealed).toMatch(/^v1\./);
      expect(queued!.body_sealed).not.toContain(url.split('/').pop());
    } finally {
      await first.close();
    }
    expect(smtp.received.filter((r) => r.to.includes('survivor@outbox.test'))).toEqual([]);

    const second = await start({ SMTP_URL: smtp.url, EMAIL_POLL_INTERVAL_MS: '20' });
    try {
      const mail = await smtp.waitForMail('survivor@outbox.test');
      expect(mail.text).toContain(url);
      const [sent] = await waitFor(async () => {
        const rows = await rowsTo(second, 'survivor@outbox.test');
        return rows[0]?.sent_at ? rows : false;
      });
      expect(sent).toMatchObject({ attempts: 1, body_sealed: null, failed_at: null });
    } finally {
      await second.close();
    }
  });

  it('an email whose sender died holding its lease (claimed, never marked) is sent by another instance once the lease ends', async () => {
    const first = await start({ SMTP_URL: smtp.url, EMAIL_POLL_INTERVAL_MS: '0' });
    try {
      const m = await createTestMerchant(first);
      const url = await invite(first, m, 'orphan@outbox.test');
      const orm = first.service.runtime.ctx.orm;
      const [{ id }] = await orm.em.fork().getConnection().execute(`select id from email_outbox where recipient = 'orphan@outbox.test'`);
      // A sender takes the lease (1 ms here) and dies before sending or marking anything.
      const claimed = await new EmailOutbox(orm, new SecretBox(parseMasterKey(TEST_MASTER_KEY))).claim(10, 1, [String(id)]);
      expect(claimed.map((c) => [c.recipient, c.attempts, c.mail?.text.includes(url)])).toEqual([['orphan@outbox.test', 1, true]]);
      const second = await start({ SMTP_URL: smtp.url, EMAIL_POLL_INTERVAL_MS: '20' });
      try {
        expect((await smtp.waitForMail('orphan@outbox.test')).text).toContain(url);
        const [row] = await waitFor(async () => {
          const rows = await rowsTo(second, 'orphan@outbox.test');
          return rows[0]?.sent_at ? rows : false;
        });
        expect(row).toMatchObject({ attempts: 2, body_sealed: null });
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });

  it('an invitation whose transaction rolls back queues no email', async () => {
    const t = await start({ SMTP_URL: smtp.url, EMAIL_POLL_INTERVAL_MS: '0' });
    try {
      const m = await createTestMerchant(t);
      const { members } = t.service.runtime.ctx.services;
      await expect(
        t.service.runtime.ctx.orm.em.fork().transactional(async (em) => {
          const made = await members.inviteFirstOwner(em, m.subsidiary.id, 'rolledback@outbox.test');
          await members.queueInvitationEmail(em, m.subsidiary.id, 'Rolled Back Ltd', made);
          expect(await rowsTo(t, 'rolledback@outbox.test')).toEqual([]); // another connection: not committed yet
          throw new DomainError('conflict', 'rolled back by the test', 'TEST');
        }),
      ).rejects.toThrow('rolled back by the test');
      expect(await rowsTo(t, 'rolledback@outbox.test')).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('an email the SMTP server refuses is retried and then delivered, once, with no failure audited', async () => {
    const t = await start({ SMTP_URL: smtp.url, EMAIL_RETRY_DELAYS_MS: '0,0,0' });
    try {
      const m = await createTestMerchant(t);
      smtp.refuseNext(2);
      const url = await invite(t, m, 'retried@outbox.test');
      const mail = await smtp.waitForMail('retried@outbox.test');
      expect(mail.text).toContain(url);
      const [row] = await waitFor(async () => {
        const rows = await rowsTo(t, 'retried@outbox.test');
        return rows[0]?.sent_at ? rows : false;
      });
      expect(row).toMatchObject({ attempts: 3, failed_at: null, body_sealed: null, last_error: null });
      await t.service.runtime.ctx.services.teamMail.settled();
      expect(smtp.received.filter((r) => r.to.includes('retried@outbox.test'))).toHaveLength(1);
      const audited = await t.service.runtime.ctx.orm.em
        .fork()
        .getConnection()
        .execute(`select 1 from audit_entry where subsidiary_id = ? and action = 'email.failed'`, [m.subsidiary.id]);
      expect(audited).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('an email refused at every attempt is given up after the last one: marked failed, its body cleared, the failure audited once', async () => {
    const t = await start({ SMTP_URL: smtp.url, EMAIL_RETRY_DELAYS_MS: '0,0' });
    try {
      const m = await createTestMerchant(t);
      smtp.refuseNext(3);
      await invite(t, m, 'given-up@outbox.test');
      const [row] = await waitFor(async () => {
        const rows = await rowsTo(t, 'given-up@outbox.test');
        return rows[0]?.failed_at ? rows : false;
      });
      expect(row).toMatchObject({ attempts: 3, sent_at: null, body_sealed: null, last_error: expect.stringContaining('554') });
      const audited = await t.service.runtime.ctx.orm.em
        .fork()
        .getConnection()
        .execute(`select target from audit_entry where subsidiary_id = ? and action = 'email.failed'`, [m.subsidiary.id]);
      expect(audited).toEqual([{ target: 'invitation email to given-up@outbox.test' }]);
      expect(smtp.received.filter((r) => r.to.includes('given-up@outbox.test'))).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('two instances sending the same queue at once deliver each email exactly once', async () => {
    // Neither sends on its own: the test runs their passes, all at once.
    const a = await start({ SMTP_URL: smtp.url, EMAIL_POLL_INTERVAL_MS: '0' });
    const b = await start({ SMTP_URL: smtp.url, EMAIL_POLL_INTERVAL_MS: '0' });
    try {
      const m = await createTestMerchant(a);
      const emails = Array.from({ length: 24 }, (_, i) => `racer${i}@outbox.test`);
      for (const email of emails) await invite(a, m, email);
      const senders = [a, b].map((t) => t.service.runtime.ctx.services.teamMail);
      // Each pass takes a batch of 10: several passes of both instances race for the 24 emails.
      let attempted = 0;
      for (;;) {
        const counts = await Promise.all([...senders, ...senders].map((s) => s.runOnce()));
        attempted += counts.reduce((x, y) => x + y, 0);
        if (counts.every((c) => c === 0)) break;
      }
      expect(attempted).toBe(emails.length);
      for (const email of emails) expect(smtp.received.filter((r) => r.to.includes(email))).toHaveLength(1);
      const rows: { n: string }[] = await a.service.runtime.ctx.orm.em
        .fork()
        .getConnection()
        .execute(`select count(*) as n from email_outbox where recipient like 'racer%@outbox.test' and sent_at is not null and attempts = 1`);
      expect(Number(rows[0]!.n)).toBe(emails.length);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('housekeeping deletes the emails sent or given up longer ago than EMAIL_OUTBOX_RETENTION_DAYS, and keeps newer ones and unsent ones', async () => {
    // No SMTP_URL: no sender takes the unsent row; the scheduler's housekeeping runs every 200 ms.
    const t = await start({ EMAIL_OUTBOX_RETENTION_DAYS: '30', SCHEDULER_INTERVAL_MS: '200' });
    try {
      const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.fork().getConnection().execute(q, p);
      /** An email queued 40 days ago and sent (or given up) `age` ago. */
      const settled = (recipient: string, column: 'sent_at' | 'failed_at', age: string) =>
        sql(
          `insert into email_outbox (kind, recipient, subject, created_at, next_attempt_at, attempts, ${column})
           values ('invitation', ?, 'Join', now() - interval '40 days', now() - interval '40 days', 1, now() - ?::interval)`,
          [recipient, age],
        );
      await settled('sent-31-days@purge.test', 'sent_at', '31 days');
      await settled('failed-31-days@purge.test', 'failed_at', '31 days');
      await settled('sent-29-days@purge.test', 'sent_at', '29 days');
      // Queued 40 days ago and never sent (still due): kept however old.
      await sql(
        `insert into email_outbox (kind, recipient, subject, body_sealed, created_at, next_attempt_at) values ('invitation', 'unsent@purge.test', 'Join', 'v1.x', now() - interval '40 days', now() - interval '40 days')`,
      );
      const left = () => sql(`select recipient from email_outbox where recipient like '%@purge.test' order by recipient`);
      await waitFor(async () => (await left()).length < 4, 10_000, 'the purge');
      expect(await left()).toEqual([{ recipient: 'sent-29-days@purge.test' }, { recipient: 'unsent@purge.test' }]);
    } finally {
      await t.close();
    }
  });
});
