import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { DomainError, forbidden, unauthenticated } from '../shared/errors';
import type { EnvironmentMode } from './app-environment.entity';
import { describeApiKey, hashApiKey } from './key-format';
import type { Tenant } from './tenant';
import { authorize } from './authorization';
import { AuditActions, type AuditService } from './audit/audit.service';
import type { MemberRole } from './member-role';
import { MemberSignIn, type SecondFactor, type SignInLimit } from './member-sign-in';

/** What the browser is told after signing in (never the key, never the session token). */
export interface SessionInfo {
  csrfToken: string;
  /** The environments this session may show: those whose private key was presented. */
  environments: EnvironmentMode[];
  expiresAt: Date;
  merchantName: string;
  /** The member the session belongs to; absent for a session opened with a private key. */
  member?: { email: string; role: MemberRole };
}

export interface SignedIn extends SessionInfo {
  /** The opaque cookie value: shown once, stored only as a hash. */
  token: string;
  /** The environment of the key just presented. */
  environment: EnvironmentMode;
}

/** A cookie-authenticated request: the cookie's token, the CSRF header and the environment in view. */
export interface SessionCredentials {
  token: string;
  csrfToken: string | undefined;
  environment: string | undefined;
}

export const WRONG_KEY = 'That private key is not valid. Check it and try again.';
export const CSRF_REFUSED = 'The request lacks the dashboard session CSRF token.';

const wrongKey = (): DomainError => new DomainError('unauthenticated', WRONG_KEY, '401');

interface SessionKeyRow {
  session_id: string;
  api_key_id: number;
  key_expires_at: Date | null;
  key_hint: string;
  subsidiary_id: number;
  environment_id: number;
  mode: EnvironmentMode;
  expires_at: Date;
  name: string;
  member_id: number | null;
  member_email: string | null;
  member_role: MemberRole | null;
}

/**
 * Dashboard sign-in: a private key is exchanged for a session whose opaque token lives in an
 * httpOnly cookie. The session reaches an environment only through the private key presented
 * for it, and only while that key works: rotating or revoking it ends the session's access
 * when the key expires (after its grace period). Sessions are rows in the database, so any
 * instance of the service recognises them; they are stored by the SHA-256 of their token.
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
      const modes = environments.map((e) => e.mode);
      return {
        token,
        csrfToken: csrfTokenOf(token),
        environment: modes.includes('test') ? 'test' : modes[0]!,
        environments: modes,
        expiresAt,
        merchantName: environments[0]?.name ?? '',
        member: { email: member.email, role: member.role },
      };
    });
  }

  /**
   * Signs in with a private key. With the token of a live session of the same merchant, the
   * key's environment is added to that session (switching test/live); otherwise a new session
   * is opened. Throws `unauthenticated` (WRONG_KEY) for anything but a working private key, and
   * `forbidden` for a private key in the grace period of a rotation (it may not manage).
   */
  async signIn(privateKey: unknown, currentToken?: string, from: { ip?: string } = {}): Promise<SignedIn> {
    if (typeof privateKey !== 'string') throw wrongKey();
    const key = privateKey.trim();
    const described = describeApiKey(key);
    // A text that is no key of ours names no merchant: there is no log to record the failure in.
    if (!described) throw wrongKey();
    const now = this.clock.now();
    const rows: {
      id: number;
      kind: string;
      hint: string;
      environment_id: number;
      subsidiary_id: number;
      mode: EnvironmentMode;
      name: string;
      expires_at: Date | null;
    }[] = await this.sql(
      `select k.id, k.kind, k.hint, k.environment_id, e.subsidiary_id, e.mode, s.name, k.expires_at
           from api_key k join app_environment e on e.id = k.environment_id join subsidiary s on s.id = e.subsidiary_id
          where k.key_hash = ?`,
      [hashApiKey(key)],
    );
    const apiKey = rows[0];
    if (!apiKey) throw wrongKey();
    const attempt = {
      subsidiaryId: apiKey.subsidiary_id,
      environment: apiKey.mode,
      actor: { type: 'API_KEY' as const, label: apiKey.hint },
      ip: from.ip ?? null,
      target: `${apiKey.kind} key`,
    };
    try {
      const working = apiKey.kind === 'private' && (apiKey.expires_at === null || new Date(apiKey.expires_at) > now);
      if (!working) throw wrongKey();
      // The dashboard manages the merchant: a key in the grace period of a rotation opens no session.
      authorize(
        {
          environmentId: apiKey.environment_id,
          subsidiaryId: apiKey.subsidiary_id,
          mode: apiKey.mode,
          keyKind: 'private',
          keyId: Number(apiKey.id),
          keyExpiresAt: apiKey.expires_at ? new Date(apiKey.expires_at).getTime() : null,
        },
        'secrets',
      );
    } catch (refused) {
      // A known key of this merchant that may not sign in: the merchant's log says so (committed on its own).
      await this.audit.record(this.orm.em.fork(), { ...attempt, action: AuditActions.signInFailed });
      throw refused;
    }

    return this.orm.em.fork().transactional(async (em) => {
      const sql = (query: string, params: unknown[]): Promise<any[]> => em.getConnection().execute(query, params, 'all', em.getTransactionContext());
      let sessionId: string | undefined;
      let token = currentToken;
      let expiresAt: Date | undefined;
      if (token) {
        const existing: { id: string; subsidiary_id: number; expires_at: Date }[] = await sql(
          `select id, subsidiary_id, expires_at from dashboard_session where token_hash = ? and expires_at > ? and member_id is null for update`,
          [hashToken(token), now],
        );
        if (existing[0] && existing[0].subsidiary_id === apiKey.subsidiary_id) {
          sessionId = String(existing[0].id);
          expiresAt = new Date(existing[0].expires_at);
        }
      }
      if (!sessionId) {
        // Old sessions go as new ones come: the table holds about the live sessions only.
        await sql(`delete from dashboard_session where expires_at <= ?`, [now]);
        token = randomBytes(32).toString('base64url');
        expiresAt = new Date(now.getTime() + this.ttlSeconds * 1000);
        const inserted: { id: string }[] = await sql(
          `insert into dashboard_session (token_hash, subsidiary_id, created_at, expires_at) values (?, ?, ?, ?) returning id`,
          [hashToken(token), apiKey.subsidiary_id, now, expiresAt],
        );
        sessionId = String(inserted[0].id);
      }
      await sql(
        `insert into dashboard_session_key (session_id, environment_id, api_key_id) values (?, ?, ?)
         on conflict (session_id, environment_id) do update set api_key_id = excluded.api_key_id`,
        [sessionId, apiKey.environment_id, apiKey.id],
      );
      const environments: { mode: EnvironmentMode }[] = await sql(
        `select e.mode from dashboard_session_key sk join app_environment e on e.id = sk.environment_id where sk.session_id = ? order by e.mode desc`,
        [sessionId],
      );
      await this.audit.record(em, { ...attempt, action: AuditActions.signedIn });
      return {
        token: token!,
        csrfToken: csrfTokenOf(token!),
        environment: apiKey.mode,
        environments: environments.map((e) => e.mode),
        expiresAt: expiresAt!,
        merchantName: apiKey.name,
      };
    });
  }

  /** The session's public facts, for a page that reloads; `unauthenticated` when it is over. */
  async describe(token: string | undefined): Promise<SessionInfo> {
    const rows = await this.workingKeys(token);
    if (rows.length === 0) throw unauthenticated();
    return {
      csrfToken: csrfTokenOf(token!),
      environments: rows.map((r) => r.mode),
      expiresAt: new Date(rows[0].expires_at),
      merchantName: rows[0].name,
      ...(rows[0].member_id !== null ? { member: { email: rows[0].member_email!, role: rows[0].member_role! } } : {}),
    };
  }

  /**
   * The tenant a cookie-authenticated request acts as: needs the session's CSRF token, and an
   * environment the session holds a working private key for (the only one, when not named).
   */
  async authenticate(credentials: SessionCredentials): Promise<Tenant> {
    if (!credentials.csrfToken || !safeEqual(credentials.csrfToken, csrfTokenOf(credentials.token))) throw forbidden(CSRF_REFUSED);
    return this.tenantOf(credentials.token, credentials.environment);
  }

  /** As authenticate, for a WebSocket whose Origin has been checked (the CSRF token is checked too). */
  async tenantOf(token: string, environment: string | undefined): Promise<Tenant> {
    const rows = await this.workingKeys(token);
    const row = environment === undefined && rows.length === 1 ? rows[0] : rows.find((r) => r.mode === environment);
    if (!row) throw unauthenticated();
    if (row.member_id !== null) {
      // A member's session acts with the member's role (the one it was opened with, still theirs).
      return {
        environmentId: row.environment_id,
        subsidiaryId: row.subsidiary_id,
        mode: row.mode,
        member: { memberId: Number(row.member_id), email: row.member_email!, role: row.member_role! },
      };
    }
    return {
      environmentId: row.environment_id,
      subsidiaryId: row.subsidiary_id,
      mode: row.mode,
      keyKind: 'private',
      keyId: Number(row.api_key_id),
      keyExpiresAt: row.key_expires_at ? new Date(row.key_expires_at).getTime() : null,
      keyHint: row.key_hint,
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
   * The environments a live session reaches now: a key session's, through its working private
   * keys; a member session's, all of the merchant's while the member is still a member with the
   * role the session names (a removed member's sessions are deleted with them; a role change
   * ends them here).
   */
  private async workingKeys(token: string | undefined): Promise<SessionKeyRow[]> {
    if (!token) return [];
    const now = this.clock.now();
    return this.sql(
      `select s.id as session_id, sk.api_key_id, k.expires_at as key_expires_at, k.hint as key_hint, s.subsidiary_id, sk.environment_id, e.mode, s.expires_at, sub.name,
              null::int as member_id, null::text as member_email, null::text as member_role
         from dashboard_session s
         join dashboard_session_key sk on sk.session_id = s.id
         join api_key k on k.id = sk.api_key_id
         join app_environment e on e.id = sk.environment_id
         join subsidiary sub on sub.id = s.subsidiary_id
        where s.token_hash = ? and s.expires_at > ? and s.member_id is null and (k.expires_at is null or k.expires_at > ?)
       union all
       select s.id, null, null, null, s.subsidiary_id, e.id, e.mode, s.expires_at, sub.name, m.id, m.email, m.role
         from dashboard_session s
         join merchant_member m on m.id = s.member_id and m.subsidiary_id = s.subsidiary_id and m.role = s.member_role
         join app_environment e on e.subsidiary_id = s.subsidiary_id
         join subsidiary sub on sub.id = s.subsidiary_id
        where s.token_hash = ? and s.expires_at > ?
        order by mode desc`,
      [hashToken(token), now, now, hashToken(token), now],
    );
  }

  private sql<T = any>(query: string, params: unknown[]): Promise<T[]> {
    return this.orm.em.getConnection().execute(query, params);
  }
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
