import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { SecretBox } from '../crypto/secret-box';
import type { Mailer, OutgoingMail } from '../mail/mailer';
import { AuditActions, SYSTEM_ACTOR, type AuditService } from './audit/audit.service';
import { EmailOutbox, type ClaimedEmail, type TeamMailKind } from './email-outbox';
import { EmailSender, type EmailSenderOptions } from './email-sender';
import type { MemberRole } from './member-role';
import { Listeners } from '../shared/listeners';
import { Pending } from '../shared/pending';

export type { TeamMailKind } from './email-outbox';

/** The outcome of one email (or of the work that was to queue it), as the domain reports it after the fact. */
export interface TeamMailOutcome {
  kind: TeamMailKind;
  /** The merchant it was sent for; null when the work failed before one was known. */
  subsidiaryId: number | null;
  /** `retry`: this attempt failed, another follows; `failed`: given up (or the work that was to queue it failed). */
  result: 'sent' | 'retry' | 'failed';
  /** Why it failed (the transport's or the database's message). */
  reason?: string;
}

export interface TeamMailOptions extends EmailSenderOptions {
  /** Days a sent or given-up email is kept before purgeSettled() deletes it; 0: kept for ever. */
  retentionDays: number;
}

/** The most rows one purge deletes: a backlog is worked off over the next runs, never in one long statement. */
const EMAIL_PURGE_BATCH = 1000;
/** How often a caught-up purge runs again (an instance's housekeeping runs every SCHEDULER_INTERVAL_MS). */
const EMAIL_PURGE_INTERVAL_MS = 3_600_000;

/** Queues an email of the team in the caller's transaction. */
export type QueueResetMail = (em: EntityManager, subsidiaryId: number, reset: ResetMailContent) => Promise<void>;

/**
 * The team's emails (invitations, password resets) with `SMTP_URL` set; without it nothing is
 * queued and nothing sent (the links are answered, and printed by the command line). Each email
 * is queued in the transaction that makes its link (`email_outbox`), so a committed invitation
 * always has its email and a rolled-back one never does; the email sender sends it after
 * commit, retries it, and after the last attempt records the failure in the merchant's audit
 * log (`email.failed`), once. Outcomes go to the listeners (the business-event log).
 */
export class TeamMail {
  private readonly pending = new Pending();
  private readonly listeners = new Listeners<TeamMailOutcome>();
  private readonly outbox: EmailOutbox;
  private readonly sender: EmailSender | null;
  /** Set by start(): a service's loop sends the queue; a command-line run sends its own emails on settled(). */
  private serviceOwned = false;
  private fault: (err: unknown) => void = () => {};
  /** When purgeSettled() deletes again; 0: at its next call. */
  private nextPurgeAt = 0;

  constructor(
    orm: MikroORM,
    private readonly audit: AuditService,
    private readonly mailer: Mailer | null,
    secrets: SecretBox,
    private readonly options: TeamMailOptions = { retryDelaysMs: [], pollIntervalMs: 0, retentionDays: 0 },
  ) {
    this.outbox = new EmailOutbox(orm, secrets);
    this.sender = mailer
      ? new EmailSender(this.outbox, mailer, options, {
          sent: (email) => this.report({ kind: email.kind, subsidiaryId: email.subsidiaryId, result: 'sent' }),
          retrying: (email, reason) => this.report({ kind: email.kind, subsidiaryId: email.subsidiaryId, result: 'retry', reason }),
          failed: (em, email, reason) => this.givenUp(em, email, reason),
          fault: (err) => this.fault(err),
        })
      : null;
  }

  /** Whether email goes out at all (SMTP_URL is set). */
  get enabled(): boolean {
    return this.mailer !== null;
  }

  /** Listens to the outcome of every email; returns the unsubscribe. */
  onOutcome(listener: (outcome: TeamMailOutcome) => void): () => void {
    return this.listeners.add(listener);
  }

  /** Starts this instance's email sender (with SMTP_URL and a poll interval); faults (database errors) go to `onFault`. */
  start(onFault?: (err: unknown) => void): void {
    this.serviceOwned = true;
    if (onFault) this.fault = onFault;
    this.sender?.start();
  }

  /** Stops the sender without draining the queue: what is left is sent by the next instance. */
  async stop(): Promise<void> {
    await this.sender?.stop();
  }

  /** One pass of the sender over every due email (tests, operations); answers how many were attempted. */
  async runOnce(): Promise<number> {
    return this.sender ? this.sender.runOnce() : 0;
  }

  /** Queues the invitation's email in `em`'s transaction; call announce() once it committed. */
  async queueInvitation(
    em: EntityManager,
    subsidiaryId: number,
    invitation: { merchantName: string; email: string; role: MemberRole; url: string; expiresAt: Date },
  ): Promise<void> {
    if (!this.sender) return;
    this.sender.queued(await this.outbox.queue(em, { kind: 'invitation', subsidiaryId, mail: invitationMail(invitation) }));
  }

  /** Emails queued by a transaction that has now committed: the sender sends them at once. */
  announce(): void {
    this.sender?.wake();
  }

  /**
   * Runs work that queues password-reset emails (it looks up who to send to first, then queues
   * each in the transaction that makes its link), in the background; the sender is woken after.
   */
  passwordResets(work: (queue: QueueResetMail) => Promise<void>): void {
    const sender = this.sender;
    if (!sender) return;
    this.inBackground('password_reset', async () => {
      await work(async (em, subsidiaryId, reset) =>
        sender.queued(await this.outbox.queue(em, { kind: 'password_reset', subsidiaryId, mail: resetMail(reset) })),
      );
      this.announce();
    });
  }

  /**
   * Resolves once the background work has queued its emails and each due email this instance
   * queued has had an attempt (sent, put off for a retry, or given up): a command-line run
   * returns after sending its emails (a failed one stays queued for a service to retry). A
   * service whose sender was stopped (or never started) leaves the queue to the next instance.
   */
  async settled(): Promise<void> {
    await this.pending.settled();
    if (this.sender && (!this.serviceOwned || this.sender.started)) {
      await this.sender.drain().catch((err: unknown) => this.fault(err));
    }
  }

  /**
   * Housekeeping: deletes a batch of the emails sent or given up more than the retention ago
   * (with or without SMTP_URL: rows of an earlier configuration go too). Runs at most once an
   * hour per instance, sooner while the last batch was full; answers how many were deleted.
   */
  async purgeSettled(): Promise<number> {
    const now = Date.now();
    if (this.options.retentionDays <= 0 || now < this.nextPurgeAt) return 0;
    const purged = await this.outbox.purgeSettled(this.options.retentionDays, EMAIL_PURGE_BATCH);
    this.nextPurgeAt = purged < EMAIL_PURGE_BATCH ? now + EMAIL_PURGE_INTERVAL_MS : 0;
    return purged;
  }

  /** Closes the transport. */
  close(): void {
    this.mailer?.close();
  }

  private inBackground(kind: TeamMailKind, work: () => Promise<void>): void {
    this.pending.add(
      work().then(
        () => true,
        (err: unknown) => {
          this.report({ kind, subsidiaryId: null, result: 'failed', reason: reasonOf(err) });
          return false;
        },
      ),
    );
  }

  private async givenUp(em: EntityManager, email: ClaimedEmail, reason: string): Promise<void> {
    if (email.subsidiaryId !== null) {
      await this.audit.record(em, {
        actor: SYSTEM_ACTOR,
        action: AuditActions.emailFailed,
        subsidiaryId: email.subsidiaryId,
        target: `${email.kind === 'invitation' ? 'invitation' : 'password reset'} email to ${email.recipient}`,
      });
    }
    this.report({ kind: email.kind, subsidiaryId: email.subsidiaryId, result: 'failed', reason });
  }

  private report(outcome: TeamMailOutcome): void {
    this.listeners.emit(outcome);
  }
}

export interface ResetMailContent {
  merchantName: string;
  email: string;
  url: string;
  expiresAt: Date;
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A merchant's name as a header shows it: one line, no control characters. */
const oneLine = (text: string): string => text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(paragraphs: string[], url: string, linkText: string): string {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`);
  body.splice(2, 0, `<p><a href="${escapeHtml(url)}">${escapeHtml(linkText)}</a></p>`);
  return `<!doctype html>\n<html><body style="font-family: sans-serif">\n${body.join('\n')}\n</body></html>\n`;
}

function invitationMail(i: { merchantName: string; email: string; role: MemberRole; url: string; expiresAt: Date }): OutgoingMail {
  const merchant = oneLine(i.merchantName);
  const role = i.role.toLowerCase();
  const until = i.expiresAt.toUTCString();
  const intro = `You are invited to join ${merchant}'s team on the payments dashboard, as ${role} (role ${i.role}).`;
  const how = `Open the link to choose your password. It works once, until ${until}.`;
  const ignore = 'If you did not expect this invitation, ignore this email.';
  return {
    to: i.email,
    subject: `Join ${merchant} on the payments dashboard`,
    text: `${intro}\n\n${how}\n${i.url}\n\n${ignore}\n`,
    html: page([intro, how, ignore], i.url, 'Accept the invitation'),
  };
}

function resetMail(r: ResetMailContent): OutgoingMail {
  const merchant = oneLine(r.merchantName);
  const until = r.expiresAt.toUTCString();
  const intro = `Someone asked to reset the password of ${r.email} for ${merchant} on the payments dashboard.`;
  const how = `Open the link to choose a new password. It works once, until ${until}.`;
  const ignore = 'If you did not ask for this, ignore this email: your password stays as it is.';
  return {
    to: r.email,
    subject: `Reset your password for ${merchant}`,
    text: `${intro}\n\n${how}\n${r.url}\n\n${ignore}\n`,
    html: page([intro, how, ignore], r.url, 'Choose a new password'),
  };
}
