import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { EnvironmentOutOfReachError, forbidden, unauthenticated } from '../shared/errors';
import type { EnvironmentMode } from './app-environment.entity';
import type { Tenant } from './tenant';
import { actionsOf } from './authorization';
import type { ActionClass } from './action-class';
import { AuditActions, type AuditService } from './audit/audit.service';
import type { MemberRole } from './member-role';
import { MemberSignIn, type SecondFactor, type SignInLimit } from './member-sign-in';

/** What the browser is told after signing in (never the key, never the session token). */
export interface SessionInfo {
  csrfToken: string;
  /** The environments this session may show: every environment of the member's merchant. */
  environments: EnvironmentMode[];
  expiresAt: Date;
  merchantName: string;
  /** The member the session belongs to, with the role it was opened with. */
  member: { email: string; role: MemberRole };
  /**
   * The action classes that role may use, from the one permission table: the dashboard shows
   * only what they allow (the services refuse the rest anyway).
   */
  actions: ActionClass[];
}

export interface SignedIn extends SessionInfo {
  /** The opaque cookie value: shown once, stored only as a hash. */
  token: string;
  /** The environment shown first: test when the merchant has one. */
  environment: EnvironmentMode;
}

/** A cookie-authenticated request: the cookie's token, the CSRF header and the environment in view. */
export interface SessionCredentials {
  token: string;
  csrfToken: string | undefined;
  environment: string | undefined;
}

export const CSRF_REFUSED = 'The request lacks the dashboard session CSRF token.';
export const TEST_ONLY_MEMBER =
  'You work in the test environment only: you were invited with a test key. For live, an owner or admin who works in live (or the live private key) removes you and invites you again.';
export const KEY_SIGN_IN_REFUSED =
  'No API key signs in to the dashboard: sign in with your email and password. The private key can invite members (inviteMember).';

interface SessionRow {
  subsidiary_id: number;
  environment_id: number;
  mode: EnvironmentMode;
  expires_at: Date;
  name: string;
  member_id: number;
  member_email: string;
  member_role: MemberRole;
  member_test_only: boolean;
}

/**
 * Dashboard sign-in of a merchant's members: an email and password are exchanged for a session
 * whose opaque token lives in an httpOnly cookie. No api-key signs in. A session acts as its
 * member with the role it was opened with, in every environment of the merchant, while the
 * member still has that role: a role change or a removal ends it. Sessions are rows in the
 * database, so any instance of the service recognises them; they are stored by the SHA-256 of
 * their token.
 */
export class DashboardSessionService {
  private readonly members: MemberSignIn;

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    private readonly audit: AuditService,
    secondFactor: SecondFactor,
    signInLimit?: SignInLimit,
  ) {
    this.members = new MemberSignIn(orm, clock, audit, secondFactor, signInLimit);
  }

  /**
   * Signs a member in with their email and password: a new session for the member and the role
   * they have now, covering both environments of the merchant (the environment is chosen per
   * request). Throws `unauthenticated` (WRONG_CREDENTIALS) for a wrong email or password,
   * `AuthenticationCodeNeeded` when the member has two-step sign-in on and `code` is missing or
   * wrong, and `SignInsLimited` when the account has had too many wrong passwords or codes.
   */
  async signInMember(email: unknown, password: unknown, code: unknown, from: { ip?: string } = {}): Promise<SignedIn> {
    return this.members.signIn(email, password, code, from.ip ?? null, async (em, member) => {
      const sql = <R = unknown>(query: string, params: unknown[]): Promise<R[]> => em.getConnection().execute(query, params, 'all', em.getTransactionContext());
      const now = this.clock.now();
      await sql(`delete from dashboard_session where expires_at <= ?`, [now]);
      const token = randomBytes(32).toString('base64url');
      const expiresAt = new Date(now.getTime() + this.ttlSeconds * 1000);
      await sql(`insert into dashboard_session (token_hash, subsidiary_id, member_id, member_role, created_at, expires_at) values (?, ?, ?, ?, ?, ?)`, [
        hashToken(token),
        member.subsidiaryId,
        member.memberId,
        member.role,
        now,
        expiresAt,
      ]);
      const environments = await sql<{ mode: EnvironmentMode; name: string }>(
        `select e.mode, s.name from app_environment e join subsidiary s on s.id = e.subsidiary_id where e.subsidiary_id = ? order by e.mode desc`,
        [member.subsidiaryId],
      );
      await this.audit.record(em, {
        action: AuditActions.signedIn,
        subsidiaryId: member.subsidiaryId,
        actor: { type: 'MEMBER', label: member.email },
        ip: from.ip ?? null,
        target: 'dashboard',
      });
      // A member who works in test only is shown (and reaches) the test environment alone.
      const modes = environments.map((e) => e.mode).filter((mode) => !member.testOnly || mode === 'test');
      if (modes.length === 0) throw forbidden(TEST_ONLY_MEMBER);
      return {
        token,
        csrfToken: csrfTokenOf(token),
        environment: modes.includes('test') ? 'test' : modes[0]!,
        environments: modes,
        expiresAt,
        merchantName: environments[0]?.name ?? '',
        member: { email: member.email, role: member.role },
        actions: actionsOf(member.role),
      };
    });
  }

  /** The session's public facts, for a page that reloads; `unauthenticated` when it is over. */
  async describe(token: string | undefined): Promise<SessionInfo> {
    const rows = reachable(await this.liveSession(token));
    const first = rows[0];
    if (!first) throw unauthenticated();
    return {
      csrfToken: csrfTokenOf(token!),
      environments: rows.map((r) => r.mode),
      expiresAt: new Date(first.expires_at),
      merchantName: first.name,
      member: { email: first.member_email, role: first.member_role },
      actions: actionsOf(first.member_role),
    };
  }

  /**
   * The tenant a cookie-authenticated request acts as: needs the session's CSRF token, and an
   * environment of the session's merchant (the only one, when not named).
   */
  async authenticate(credentials: SessionCredentials): Promise<Tenant> {
    if (!credentials.csrfToken || !safeEqual(credentials.csrfToken, csrfTokenOf(credentials.token))) throw forbidden(CSRF_REFUSED);
    return this.tenantOf(credentials.token, credentials.environment);
  }

  /** As authenticate, for a WebSocket whose Origin has been checked (the CSRF token is checked too). */
  async tenantOf(token: string, environment: string | undefined): Promise<Tenant> {
    const all = await this.liveSession(token);
    const rows = reachable(all);
    const row = environment === undefined && rows.length === 1 ? rows[0] : rows.find((r) => r.mode === environment);
    if (!row) {
      // A live session of a member who works in test only, asking for live: refused, not signed out.
      if (all.some((r) => r.mode === environment)) throw new EnvironmentOutOfReachError(TEST_ONLY_MEMBER, 'You work in the test environment only.');
      throw unauthenticated();
    }
    // A member's session acts with the member's role (the one it was opened with, still theirs).
    return {
      environmentId: row.environment_id,
      subsidiaryId: row.subsidiary_id,
      mode: row.mode,
      member: { memberId: Number(row.member_id), email: row.member_email, role: row.member_role, testOnly: row.member_test_only },
      keyExpiresAt: new Date(row.expires_at).getTime(),
    };
  }

  /** Ends the session (sign-out). */
  async signOut(token: string | undefined): Promise<void> {
    if (!token) return;
    await this.sql(`delete from dashboard_session where token_hash = ?`, [hashToken(token)]);
  }

  /** Whether `given` is the CSRF token of the session `token` (compared in constant time). */
  csrfMatches(token: string, given: unknown): boolean {
    return typeof given === 'string' && safeEqual(given, csrfTokenOf(token));
  }

  /**
   * The environments a live session reaches now, one row each: all of the merchant's, while the
   * member is still a member with the role the session names (a removed member's sessions are
   * deleted with them; a role change ends them here).
   */
  private async liveSession(token: string | undefined): Promise<SessionRow[]> {
    if (!token) return [];
    return this.sql(
      `select s.subsidiary_id, e.id as environment_id, e.mode, s.expires_at, sub.name, m.id as member_id, m.email as member_email, m.role as member_role,
              m.test_only as member_test_only
         from dashboard_session s
         join merchant_member m on m.id = s.member_id and m.subsidiary_id = s.subsidiary_id and m.role = s.member_role
         join app_environment e on e.subsidiary_id = s.subsidiary_id
         join subsidiary sub on sub.id = s.subsidiary_id
        where s.token_hash = ? and s.expires_at > ?
        order by e.mode desc`,
      [hashToken(token), this.clock.now()],
    );
  }

  private sql<T = any>(query: string, params: unknown[]): Promise<T[]> {
    return this.orm.em.getConnection().execute(query, params);
  }
}

/** The environments of a session its member reaches: only test for a member who works in test only. */
function reachable(rows: SessionRow[]): SessionRow[] {
  return rows.filter((r) => !r.member_test_only || r.mode === 'test');
}

function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The CSRF token is derived from the session token (a one-way hash), so it needs no storage,
 * cannot lead back to the cookie, and a page of another site, which can neither read the
 * cookie nor our responses, cannot know it.
 */
function csrfTokenOf(token: string): string {
  return createHash('sha256').update(`dashboard-csrf:${token}`, 'utf8').digest('base64url');
}

function safeEqual(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}
