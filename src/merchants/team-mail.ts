import type { MikroORM } from '@mikro-orm/postgresql';
import type { Mailer, OutgoingMail } from '../mail/mailer';
import { AuditActions, SYSTEM_ACTOR, type AuditService } from './audit/audit.service';
import type { MemberRole } from './member-role';

/** What an email of the team is about. */
export type TeamMailKind = 'invitation' | 'password_reset';

/** The outcome of one email (or of the work that was to send it), as the domain reports it after the fact. */
export interface TeamMailOutcome {
  kind: TeamMailKind;
  /** The merchant it was sent for; null when the work failed before one was known. */
  subsidiaryId: number | null;
  result: 'sent' | 'failed';
  /** Why it failed (the transport's or the database's message). */
  reason?: string;
}

/**
 * The team's emails (invitations, password resets), sent through the `Mailer` the composition
 * root hands in, or not at all without one (`SMTP_URL` unset). Sending happens in the background,
 * after the change that asked for it has committed, and never fails that change: a failed send
 * is reported to the listeners (the business-event log) and written to the merchant's audit log
 * (`email.failed`). `settled()` waits for the sends in flight, before the database closes.
 */
export class TeamMail {
  private readonly pending = new Set<Promise<void>>();
  private readonly listeners = new Set<(outcome: TeamMailOutcome) => void>();

  constructor(
    private readonly orm: MikroORM,
    private readonly audit: AuditService,
    private readonly mailer: Mailer | null,
  ) {}

  /** Whether email goes out at all (SMTP_URL is set). */
  get enabled(): boolean {
    return this.mailer !== null;
  }

  /** Listens to the outcome of every email; returns the unsubscribe. */
  onOutcome(listener: (outcome: TeamMailOutcome) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Emails an invitation to join the merchant's team, in the background. */
  invitation(subsidiaryId: number, invitation: { merchantName: string; email: string; role: MemberRole; url: string; expiresAt: Date }): void {
    if (!this.mailer) return;
    this.inBackground('invitation', () => this.send('invitation', subsidiaryId, invitationMail(invitation)));
  }

  /** Runs work that sends password-reset emails (it looks up who to send to first), in the background. */
  passwordResets(work: (send: (subsidiaryId: number, reset: ResetMailContent) => Promise<void>) => Promise<void>): void {
    if (!this.mailer) return;
    this.inBackground('password_reset', () => work((subsidiaryId, reset) => this.send('password_reset', subsidiaryId, resetMail(reset))));
  }

  /** Resolves once every email in flight has been sent or has failed (and been recorded). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Closes the transport. */
  close(): void {
    this.mailer?.close();
  }

  private inBackground(kind: TeamMailKind, work: () => Promise<void>): void {
    const running: Promise<void> = work()
      .catch((err: unknown) => this.report({ kind, subsidiaryId: null, result: 'failed', reason: reasonOf(err) }))
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  private async send(kind: TeamMailKind, subsidiaryId: number, mail: OutgoingMail): Promise<void> {
    try {
      await this.mailer!.send(mail);
    } catch (err) {
      this.report({ kind, subsidiaryId, result: 'failed', reason: reasonOf(err) });
      await this.audit.record(this.orm.em.fork(), {
        actor: SYSTEM_ACTOR,
        action: AuditActions.emailFailed,
        subsidiaryId,
        target: `${kind === 'invitation' ? 'invitation' : 'password reset'} email to ${mail.to}`,
      });
      return;
    }
    this.report({ kind, subsidiaryId, result: 'sent' });
  }

  private report(outcome: TeamMailOutcome): void {
    for (const listener of this.listeners) listener(outcome);
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
