import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { DomainError, notFound } from '../shared/errors';
import { authorize, authorizeMemberReach, currentMember } from './authorization';
import { AuditActions, SYSTEM_ACTOR, type AuditService } from './audit/audit.service';
import { normalizeEmail } from './member-invitation';
import type { MemberRole } from './member-role';
import { MEMBER_NOT_FOUND, type MemberView } from './member.service';
import { checkPasswordStrength, hashPassword } from './password';
import type { TeamMail } from './team-mail';
import type { Tenant } from './tenant';

/** A password-reset link is valid this long, and once. */
export const PASSWORD_RESET_TTL_MS = 3600 * 1000;

export const RESET_LINK_INVALID = 'This password reset link is not valid: it does not exist, was already used or has expired.';
const resetLinkInvalid = (): DomainError => new DomainError('not_found', RESET_LINK_INVALID, 'RESET_LINK_INVALID');

/** A reset link made by an owner or admin for a member: shown once. */
export interface PasswordResetLinkView {
  email: string;
  /** Where the member chooses a new password; the token is its last path segment. */
  resetUrl: string;
  expiresAt: Date;
}

type Sql = <R>(query: string, params: unknown[]) => Promise<R[]>;

const hashResetToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * Members who lost their password choose a new one through a link valid an hour and used once:
 * asked for by anyone who knows the email (the link goes to that email only, and the answer is
 * the same whether or not it is a member's), or made by an owner or admin and handed over by
 * them. Setting the password ends every session of the member. Only the SHA-256 of a link's
 * token is stored.
 */
export class PasswordResetService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly publicUrl: string,
    private readonly audit: AuditService,
    private readonly mail: TeamMail,
  ) {}

  /**
   * Emails a reset link to every membership of `email` (one per merchant), in the background;
   * answers at once and alike whether the email is a member's or not. Without email
   * (SMTP_URL unset) nothing could reach the person, so nothing is made.
   */
  requestPasswordReset(emailInput: unknown, from: { ip?: string | null } = {}): true {
    const email = normalizeEmail(emailInput);
    this.mail.passwordResets(async (queue) => {
      const memberships: { id: number; subsidiary_id: number; email: string; name: string }[] = await this.orm.em
        .fork()
        .getConnection()
        .execute(
          `select m.id, m.subsidiary_id, m.email, s.name from merchant_member m join subsidiary s on s.id = m.subsidiary_id where lower(m.email) = ? order by m.id`,
          [email],
        );
      for (const member of memberships) {
        await this.orm.em.fork().transactional(async (em) => {
          const link = await this.issue(sqlOf(em), member.id);
          // Nobody is signed in: the service acts on an anonymous request, from its address.
          await this.audit.record(em, {
            actor: SYSTEM_ACTOR,
            ip: from.ip ?? null,
            action: AuditActions.passwordResetRequested,
            subsidiaryId: member.subsidiary_id,
            target: member.email,
          });
          // The email (sealed: it holds the link) is queued with the link it announces.
          await queue(em, member.subsidiary_id, { merchantName: member.name, email: member.email, url: link.resetUrl, expiresAt: link.expiresAt });
        });
      }
    });
    return true;
  }

  /** A reset link for a member of the caller's merchant (class `members`; only an owner makes one for an owner). */
  async createPasswordResetLink(principal: Tenant, emailInput: unknown): Promise<PasswordResetLinkView> {
    const email = normalizeEmail(emailInput);
    authorize(principal, 'members');
    return this.orm.em.fork().transactional(async (em) => {
      const sql = sqlOf(em);
      const [target] = await sql<{ id: number; email: string; role: MemberRole; test_only: boolean }>(
        `select id, email, role, test_only from merchant_member where subsidiary_id = ? and lower(email) = ? for update`,
        [principal.subsidiaryId, email],
      );
      const actor = await currentMember(em, principal);
      authorize(actor, 'members', { concernsOwner: target?.role === 'OWNER' });
      if (!target) throw notFound(MEMBER_NOT_FOUND, 'MEMBER_NOT_FOUND');
      // A test-mode credential resets only a test-only member's password: never a way into live.
      authorizeMemberReach(actor, target.test_only);
      const link = await this.issue(sql, target.id);
      await this.audit.recordTeamChange(em, principal, AuditActions.passwordResetLinkCreated, target.email);
      return { email: target.email, ...link };
    });
  }

  /** Sets the member's password (12 characters or more) with a reset link's token, uses the link up and ends the member's sessions. */
  async resetPassword(token: unknown, password: unknown, from: { ip?: string | null } = {}): Promise<MemberView> {
    const chosen = checkPasswordStrength(password);
    if (typeof token !== 'string' || token.length === 0 || token.length > 200) throw resetLinkInvalid();
    const passwordHash = await hashPassword(chosen);
    const now = this.clock.now();
    return this.orm.em.fork().transactional(async (em) => {
      const sql = sqlOf(em);
      // Locked: the same link used twice at once sets the password once.
      const [reset] = await sql<{ id: number; member_id: number; expires_at: Date; used_at: Date | null }>(
        `select id, member_id, expires_at, used_at from member_password_reset where token_hash = ? for update`,
        [hashResetToken(token)],
      );
      if (!reset || reset.used_at !== null || new Date(reset.expires_at) <= now) throw resetLinkInvalid();
      const [member] = await sql<{ id: number; subsidiary_id: number; email: string; role: MemberRole; created_at: Date; test_only: boolean }>(
        `update merchant_member set password_hash = ? where id = ? returning id, subsidiary_id, email, role, created_at, test_only`,
        [passwordHash, reset.member_id],
      );
      if (!member) throw resetLinkInvalid();
      // This link is used; any other link of the member dies with it.
      await sql(`update member_password_reset set used_at = ? where member_id = ? and used_at is null`, [now, member.id]);
      await sql(`delete from dashboard_session where member_id = ?`, [member.id]);
      await this.audit.record(em, {
        actor: { type: 'MEMBER', label: member.email },
        ip: from.ip ?? null,
        action: AuditActions.passwordReset,
        subsidiaryId: member.subsidiary_id,
        target: member.email,
      });
      return { email: member.email, role: member.role, createdAt: new Date(member.created_at), testOnly: member.test_only };
    });
  }

  /** A new link for the member, replacing any unused one. */
  private async issue(sql: Sql, memberId: number): Promise<{ resetUrl: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
    await sql(`delete from member_password_reset where member_id = ? and used_at is null`, [memberId]);
    await sql(`insert into member_password_reset (member_id, token_hash, expires_at, created_at) values (?, ?, ?, ?)`, [
      memberId,
      hashResetToken(token),
      expiresAt,
      now,
    ]);
    return { resetUrl: `${this.publicUrl.replace(/\/+$/, '')}/dashboard/reset/${token}`, expiresAt };
  }
}

function sqlOf(em: EntityManager): Sql {
  return (query, params) => em.getConnection().execute(query, params, 'all', em.getTransactionContext());
}
