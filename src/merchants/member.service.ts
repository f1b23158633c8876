import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { conflict, forbidden, notFound, validationError } from '../shared/errors';
import { isUniqueViolation } from '../db/sql';
import { authorize, authorizeMemberReach, currentMember, testModeOnly } from './authorization';
import type { MemberRole } from './member-role';
import { hashInvitationToken, invitationInvalid, normalizeEmail, parseMemberRole, recordInvitation, type InvitationView } from './member-invitation';
import { checkPasswordStrength, hashPassword } from './password';
import type { Tenant } from './tenant';
import { AuditActions, type AuditService } from './audit/audit.service';
import type { TeamMail } from './team-mail';
import { Listeners } from '../shared/listeners';

export interface MemberView {
  email: string;
  role: MemberRole;
  createdAt: Date;
  /** Works in the test environment only. */
  testOnly: boolean;
}

export const LAST_OWNER = 'A merchant always keeps one owner: make another member an owner first.';
export const ALREADY_MEMBER = 'This email is already a member of the merchant.';
export const MEMBER_NOT_FOUND = 'No member with this email.';

interface MemberRow {
  id: number;
  email: string;
  role: MemberRole;
  created_at: Date;
  test_only: boolean;
}

/**
 * After a role change or a removal commits: the member's open sessions no longer work, so the
 * connections they hold (GraphQL WebSockets) in the merchant's environments must be checked.
 */
export interface MemberSessionsEnded {
  subsidiaryId: number;
  environmentIds: number[];
}

const view = (row: MemberRow): MemberView => ({ email: row.email, role: row.role, createdAt: new Date(row.created_at), testOnly: row.test_only });

/**
 * A merchant's team: invitations, members and their roles. Every change is authorized by the
 * one check (`authorize`, class `members`; only an owner acts on owners) and taken with the
 * merchant's row locked, so the rule that a merchant always keeps an owner holds however many
 * changes run at once.
 */
export class MemberService {
  private readonly sessionsEndedListeners = new Listeners<MemberSessionsEnded>();

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly publicUrl: string,
    private readonly audit: AuditService,
    private readonly mail: TeamMail,
  ) {}

  /** Calls `listener` after each committed role change or removal of a member; returns the unsubscribe. */
  onMemberSessionsEnded(listener: (notice: MemberSessionsEnded) => void): () => void {
    return this.sessionsEndedListeners.add(listener);
  }

  /** The merchant's members, oldest first. */
  async members(principal: Tenant): Promise<MemberView[]> {
    authorize(principal, 'members');
    const rows: MemberRow[] = await this.orm.em
      .fork()
      .getConnection()
      .execute(`select id, email, role, created_at, test_only from merchant_member where subsidiary_id = ? order by created_at, id`, [principal.subsidiaryId]);
    return rows.map(view);
  }

  /** Invites `email` with `role`: answers the invitation URL (valid 72 hours, once). */
  async inviteMember(principal: Tenant, input: { email: unknown; role: unknown }): Promise<InvitationView> {
    const email = normalizeEmail(input.email);
    const role = parseMemberRole(input.role);
    authorize(principal, 'members', { concernsOwner: role === 'OWNER' });
    const invitation = await this.inTeam(principal, async (em, sql) => {
      const actor = await currentMember(em, principal);
      authorize(actor, 'members', { concernsOwner: role === 'OWNER' });
      if ((await sql(`select 1 from merchant_member where subsidiary_id = ? and lower(email) = ?`, [principal.subsidiaryId, email])).length) {
        throw conflict(ALREADY_MEMBER, 'ALREADY_MEMBER');
      }
      // A new invitation replaces one not yet used: that is changing it, under the rules of changing
      // a member (an owner's only by an owner; one who would work in live only by a live credential).
      const [pending] = await sql<{ role: MemberRole; test_only: boolean }>(
        `select role, test_only from member_invitation where subsidiary_id = ? and lower(email) = ? and accepted_at is null and expires_at > ?`,
        [principal.subsidiaryId, email, this.clock.now()],
      );
      if (pending) {
        authorize(actor, 'members', { concernsOwner: pending.role === 'OWNER' });
        authorizeMemberReach(actor, pending.test_only);
      }
      const invitation = await recordInvitation(em, {
        subsidiaryId: principal.subsidiaryId,
        email,
        role,
        now: this.clock.now(),
        publicUrl: this.publicUrl,
        testOnly: testModeOnly(actor),
      });
      await this.audit.recordTeamChange(em, principal, AuditActions.memberInvited, `${email} as ${role}`);
      const [merchant] = await sql<{ name: string }>(`select name from subsidiary where id = ?`, [principal.subsidiaryId]);
      // Its email is queued with it (with SMTP_URL): committed together, or not at all.
      await this.queueInvitationEmail(em, principal.subsidiaryId, merchant!.name, invitation);
      return invitation;
    });
    // Committed: the email goes out now, in the background, and never fails the invitation.
    this.mail.announce();
    return invitation;
  }

  /** Queues the email of an invitation in the transaction that records it (when email is configured); announceInvitations() after commit. */
  queueInvitationEmail(em: EntityManager, subsidiaryId: number, merchantName: string, invitation: InvitationView): Promise<void> {
    return this.mail.queueInvitation(em, subsidiaryId, {
      merchantName,
      email: invitation.email,
      role: invitation.role,
      url: invitation.invitationUrl,
      expiresAt: invitation.expiresAt,
    });
  }

  /** Invitation emails were queued by a transaction that committed: they are sent now, in the background. */
  announceInvitations(): void {
    this.mail.announce();
  }

  /**
   * The first owner of a merchant, invited by the operator (`merchant:create --owner-email`)
   * inside the transaction that creates the merchant: no principal, nobody to authorize.
   */
  inviteFirstOwner(em: EntityManager, subsidiaryId: number, email: unknown): Promise<InvitationView> {
    return recordInvitation(em, { subsidiaryId, email: normalizeEmail(email), role: 'OWNER', now: this.clock.now(), publicUrl: this.publicUrl });
  }

  /** Makes the invited person a member with the password they chose (12 characters or more); the invitation is then used up. */
  async acceptInvitation(token: unknown, password: unknown): Promise<MemberView> {
    const chosen = checkPasswordStrength(password);
    if (typeof token !== 'string' || token.length === 0 || token.length > 200) throw invitationInvalid();
    const passwordHash = await hashPassword(chosen);
    const now = this.clock.now();
    return this.orm.em.fork().transactional(async (em) => {
      const sql = <T>(query: string, params: unknown[]): Promise<T[]> => em.getConnection().execute(query, params, 'all', em.getTransactionContext());
      // Locked: the same token accepted twice at once is used by one of them only.
      const [invitation] = await sql<{
        id: number;
        subsidiary_id: number;
        email: string;
        role: MemberRole;
        expires_at: Date;
        accepted_at: Date | null;
        test_only: boolean;
      }>(`select id, subsidiary_id, email, role, expires_at, accepted_at, test_only from member_invitation where token_hash = ? for update`, [
        hashInvitationToken(token),
      ]);
      if (!invitation || invitation.accepted_at !== null || new Date(invitation.expires_at) <= now) throw invitationInvalid();
      await sql(`update member_invitation set accepted_at = ? where id = ?`, [now, invitation.id]);
      try {
        const [row] = await sql<MemberRow>(
          `insert into merchant_member (subsidiary_id, email, password_hash, role, created_at, test_only) values (?, ?, ?, ?, ?, ?) returning id, email, role, created_at, test_only`,
          [invitation.subsidiary_id, invitation.email, passwordHash, invitation.role, now, invitation.test_only],
        );
        // The invited person acts for themself: the log names them.
        await this.audit.record(em, {
          actor: { type: 'MEMBER', label: invitation.email },
          action: AuditActions.memberJoined,
          subsidiaryId: invitation.subsidiary_id,
          target: `${invitation.email} as ${invitation.role}`,
        });
        return view(row!);
      } catch (e) {
        if (isUniqueViolation(e, 'merchant_member_subsidiary_email_unique')) throw conflict(ALREADY_MEMBER, 'ALREADY_MEMBER');
        throw e;
      }
    });
  }

  /**
   * Gives a member another role and, with `testOnly` (a boolean; absent: unchanged), another
   * reach. Only an owner makes an owner or changes one; the merchant keeps an owner who works in
   * live. Letting a member work in live takes a caller who works in live (the live private key, a
   * member who works in live), as inviting one does; so does changing a member who works in live.
   */
  async changeMemberRole(principal: Tenant, input: { email: unknown; role: unknown; testOnly?: unknown }): Promise<MemberView> {
    const email = normalizeEmail(input.email);
    const role = parseMemberRole(input.role);
    const testOnly = parseReach(input.testOnly);
    authorize(principal, 'members', { concernsOwner: role === 'OWNER' });
    if (testOnly === false) authorizeMemberReach(principal, false);
    const { member, changed } = await this.inTeam(principal, async (em, sql) => {
      const target = await this.lockedTarget(em, principal, email, role === 'OWNER', testOnly === false);
      const after = { role, testOnly: testOnly ?? target.test_only };
      if (target.role === 'OWNER' && (after.role !== 'OWNER' || (after.testOnly && !target.test_only)))
        await this.keepAnOwner(sql, principal.subsidiaryId, target);
      const [row] = await sql<MemberRow>(`update merchant_member set role = ?, test_only = ? where id = ? returning id, email, role, created_at, test_only`, [
        after.role,
        after.testOnly,
        target.id,
      ]);
      const before = { role: target.role, testOnly: target.test_only };
      const differs = before.role !== after.role || before.testOnly !== after.testOnly;
      if (differs)
        await this.audit.recordTeamChange(
          em,
          principal,
          AuditActions.memberRoleChanged,
          `${target.email} from ${standing(before, after)} to ${standing(after, before)}`,
        );
      return { member: view(row!), changed: differs ? await this.environmentIds(sql, principal.subsidiaryId) : null };
    });
    if (changed) this.sessionsEnded({ subsidiaryId: principal.subsidiaryId, environmentIds: changed });
    return member;
  }

  /** Removes a member. Only an owner removes an owner, and never the last one. */
  async removeMember(principal: Tenant, email: unknown): Promise<boolean> {
    const normalized = normalizeEmail(email);
    authorize(principal, 'members');
    const environmentIds = await this.inTeam(principal, async (em, sql) => {
      const target = await this.lockedTarget(em, principal, normalized, false);
      if (target.role === 'OWNER') await this.keepAnOwner(sql, principal.subsidiaryId, target);
      // The member's sessions go with them (the foreign key cascades).
      await sql(`delete from merchant_member where id = ?`, [target.id]);
      await this.audit.recordTeamChange(em, principal, AuditActions.memberRemoved, `${target.email} (${target.role})`);
      return this.environmentIds(sql, principal.subsidiaryId);
    });
    this.sessionsEnded({ subsidiaryId: principal.subsidiaryId, environmentIds });
    return true;
  }

  private async environmentIds(sql: <R>(query: string, params: unknown[]) => Promise<R[]>, subsidiaryId: number): Promise<number[]> {
    return (await sql<{ id: number }>(`select id from app_environment where subsidiary_id = ? order by id`, [subsidiaryId])).map((r) => Number(r.id));
  }

  private sessionsEnded(notice: MemberSessionsEnded): void {
    this.sessionsEndedListeners.emit(notice);
  }

  /**
   * Runs `work` in a transaction holding the merchant's row lock: changes of one team take
   * turns, so two removals of the last two owners cannot both see another owner left.
   */
  private inTeam<T>(principal: Tenant, work: (em: EntityManager, sql: <R>(query: string, params: unknown[]) => Promise<R[]>) => Promise<T>): Promise<T> {
    return this.orm.em.fork().transactional(async (em) => {
      const sql = <R>(query: string, params: unknown[]): Promise<R[]> => em.getConnection().execute(query, params, 'all', em.getTransactionContext());
      const locked = await sql(`select id from subsidiary where id = ? for update`, [principal.subsidiaryId]);
      if (!locked.length) throw notFound('merchant not found', '13');
      return work(em, sql);
    });
  }

  /** The member to change, and the caller's right to change them, both as they are now (under the team lock). */
  private async lockedTarget(em: EntityManager, principal: Tenant, email: string, makesOwner: boolean, grantsLive = false): Promise<MemberRow> {
    const rows: MemberRow[] = await em
      .getConnection()
      .execute(
        `select id, email, role, created_at, test_only from merchant_member where subsidiary_id = ? and lower(email) = ?`,
        [principal.subsidiaryId, email],
        'all',
        em.getTransactionContext(),
      );
    const actor = await currentMember(em, principal);
    authorize(actor, 'members', { concernsOwner: makesOwner || rows[0]?.role === 'OWNER' });
    if (!rows[0]) throw notFound(MEMBER_NOT_FOUND, 'MEMBER_NOT_FOUND');
    authorizeMemberReach(actor, rows[0].test_only && !grantsLive);
    return rows[0];
  }

  /** Refuses to take away `target`'s ownership when no other owner of its reach or wider is left: a merchant keeps an owner who works in live. */
  private async keepAnOwner(sql: <R>(query: string, params: unknown[]) => Promise<R[]>, subsidiaryId: number, target: MemberRow): Promise<void> {
    const [owners] = await sql<{ n: string }>(
      `select count(*) as n from merchant_member where subsidiary_id = ? and role = 'OWNER' and id <> ? and (not test_only or ?::boolean)`,
      [subsidiaryId, target.id, target.test_only],
    );
    if (Number(owners!.n) === 0) throw forbidden(LAST_OWNER);
  }
}

/** A member's role as the audit log writes it, with where they work when that changes: `DEVELOPER`, `DEVELOPER (test only)`. */
function standing(member: { role: MemberRole; testOnly: boolean }, other: { testOnly: boolean }): string {
  return member.testOnly && !other.testOnly ? `${member.role} (test only)` : member.role;
}

/** The reach asked for: a boolean, or undefined (unchanged). */
function parseReach(value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw validationError('testOnly must be true or false.');
  return value;
}
