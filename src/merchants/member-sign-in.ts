import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { DomainError } from '../shared/errors';
import { AuditActions, type AuditService } from './audit/audit.service';
import type { MemberRole } from './member-role';
import { MAX_PASSWORD_LENGTH, verifyPassword } from './password';

export const WRONG_CREDENTIALS = 'That email and password do not match. Check them and try again.';
export const TOO_MANY_SIGN_INS = 'Too many failed sign-ins for this account. Try again later.';

export const CODE_NEEDED = 'Enter the authentication code from your authenticator app, or one of your recovery codes.';
export const WRONG_CODE = 'That authentication code is not valid, or was used already. Enter the current code from your app, or an unused recovery code.';

/** The audit targets of a member's failed sign-in: wrong passwords and wrong codes count towards the limit. */
export const WRONG_PASSWORD_TARGET = 'wrong password';
export const WRONG_CODE_TARGET = 'wrong authentication code';
export const LIMITED_TARGET = 'too many failed sign-ins';

/** Per-account limit: at most `failures` wrong passwords or authentication codes per member in `windowSeconds`. */
export interface SignInLimit {
  failures: number;
  windowSeconds: number;
}

export const DEFAULT_SIGN_IN_LIMIT: SignInLimit = Object.freeze({ failures: 5, windowSeconds: 15 * 60 });

/** A member's account refuses sign-ins for a while after too many wrong passwords. */
export class SignInsLimited extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('forbidden', TOO_MANY_SIGN_INS, '429');
    this.name = 'SignInsLimited';
  }
}

/**
 * The password was right, and the member has two-step sign-in on: a code is needed (`wrong`:
 * one was given and refused). No session is opened.
 */
export class AuthenticationCodeNeeded extends DomainError {
  constructor(readonly wrong: boolean) {
    super('unauthenticated', wrong ? WRONG_CODE : CODE_NEEDED, wrong ? 'TOTP_INVALID' : 'TOTP_REQUIRED');
    this.name = 'AuthenticationCodeNeeded';
  }
}

/** A member with two-step sign-in on, as the second step sees them. */
export interface SecondFactorMember {
  id: number;
  subsidiaryId: number;
  email: string;
  sealedSecret: string;
  /** The time step of the last code accepted. */
  lastTimeStep: number | null;
}

/** The second step of a sign-in (member-totp.service.ts), run in the sign-in's transaction with the member's row locked. */
export interface SecondFactor {
  verify(em: EntityManager, member: SecondFactorMember, code: string, ip: string | null): Promise<boolean>;
}

export const wrongCredentials = (): DomainError => new DomainError('unauthenticated', WRONG_CREDENTIALS, '401');

/** The member whose email and password were verified. */
export interface VerifiedMember {
  memberId: number;
  subsidiaryId: number;
  email: string;
  role: MemberRole;
  /** Works in the test environment only. */
  testOnly: boolean;
}

interface MemberRow {
  id: number;
  subsidiary_id: number;
  email: string;
  role: MemberRole;
  password_hash: string;
  test_only: boolean;
  totp_secret_sealed: string | null;
  totp_last_time_step: string | null;
}

/** Compared against when no member has the email, so an unknown email takes as long as a known one. */
const NOBODY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$' + Buffer.alloc(64).toString('base64');

/**
 * Checks a member's email and password, limited per account: after `limit.failures` wrong
 * passwords or authentication codes within `limit.windowSeconds` (counted since the member's last
 * successful sign-in or password reset),
 * the account answers `SignInsLimited` without looking at the password. Every outcome is in the
 * merchant's audit log (`session.signed_in` is written by the caller, with the session it opens;
 * `session.sign_in_failed` here). The count is read from the audit log itself, with the member's
 * row locked, so it holds across instances and concurrent attempts.
 */
export class MemberSignIn {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly secondFactor: SecondFactor,
    private readonly limit: SignInLimit = DEFAULT_SIGN_IN_LIMIT,
  ) {}

  /**
   * Verifies the password of the member with this email and, when it matches, runs `open` in the
   * same transaction (with the member's row locked). An email that is a member of several
   * merchants signs in to the oldest membership whose password matches. The password is checked
   * against every membership of the email first, whichever matches: a merchant whose password
   * was not given hears of the sign-in only when none matched (a failed sign-in in its audit log,
   * counted towards its limit), so another merchant holding a membership of the same email can
   * neither lock the account out nor read its owner's sign-ins. When that member has
   * two-step sign-in on, `codeInput` must be a current TOTP code or an unused recovery code:
   * without one the answer is `AuthenticationCodeNeeded` (not a failure); a wrong one is a
   * failed sign-in, counted towards the limit like a wrong password.
   */
  async signIn<T>(
    emailInput: unknown,
    passwordInput: unknown,
    codeInput: unknown,
    ip: string | null,
    open: (em: EntityManager, member: VerifiedMember) => Promise<T>,
  ): Promise<T> {
    if (typeof emailInput !== 'string' || typeof passwordInput !== 'string' || passwordInput.length > MAX_PASSWORD_LENGTH || emailInput.length > 320) {
      throw wrongCredentials();
    }
    const email = emailInput.trim().toLowerCase();
    const candidates: { id: number; password_hash: string }[] = await this.orm.em
      .fork()
      .getConnection()
      .execute(`select id, password_hash from merchant_member where lower(email) = ? order by id`, [email]);
    if (candidates.length === 0) {
      await verifyPassword(passwordInput, NOBODY_HASH);
      throw wrongCredentials();
    }
    const matching: typeof candidates = [];
    for (const candidate of candidates) if (await verifyPassword(passwordInput, candidate.password_hash)) matching.push(candidate);
    const code = typeof codeInput === 'string' && codeInput.trim() !== '' ? codeInput.trim() : undefined;
    let limited: SignInsLimited | undefined;
    // No membership's password: each one records the failure. Otherwise only those whose it is try.
    for (const candidate of matching.length > 0 ? matching : candidates) {
      const outcome = await this.attempt(candidate.id, matching.length > 0 ? candidate.password_hash : null, passwordInput, code, ip, open);
      if (outcome.signedIn) return outcome.value as T;
      // The password matched this membership: its second step decides.
      if (outcome.needsCode) throw outcome.needsCode;
      if (outcome.limited) limited ??= outcome.limited;
    }
    throw limited && candidates.length === 1 ? limited : wrongCredentials();
  }

  /**
   * One membership's turn, under its row lock: the limit, then the password, then the second step.
   * `verifiedHash` is the hash the password was found to match before the lock (null: it matched
   * none); when the row still holds it, the password is not hashed again.
   */
  private attempt<T>(
    memberId: number,
    verifiedHash: string | null,
    password: string,
    code: string | undefined,
    ip: string | null,
    open: (em: EntityManager, member: VerifiedMember) => Promise<T>,
  ): Promise<{ signedIn: true; value: T } | { signedIn: false; limited?: SignInsLimited; needsCode?: AuthenticationCodeNeeded }> {
    return this.orm.em.fork().transactional(async (em) => {
      const sql = <R>(query: string, params: unknown[]): Promise<R[]> => em.getConnection().execute(query, params, 'all', em.getTransactionContext());
      // Locked: attempts on one account take turns, so the limit is exact.
      const [member] = await sql<MemberRow>(
        `select id, subsidiary_id, email, role, password_hash, test_only, totp_secret_sealed, totp_last_time_step from merchant_member where id = ? for update`,
        [memberId],
      );
      if (!member) return { signedIn: false };
      const failed = (target: string) =>
        this.audit.record(em, {
          action: AuditActions.signInFailed,
          subsidiaryId: member.subsidiary_id,
          actor: { type: 'MEMBER', label: member.email },
          ip,
          target,
        });
      const retryAfter = await this.limitedFor(sql, member);
      if (retryAfter !== undefined) {
        await failed(LIMITED_TARGET);
        return { signedIn: false, limited: new SignInsLimited(retryAfter) };
      }
      const matches = verifiedHash !== null && (verifiedHash === member.password_hash || (await verifyPassword(password, member.password_hash)));
      if (!matches) {
        await failed(WRONG_PASSWORD_TARGET);
        return { signedIn: false };
      }
      if (member.totp_secret_sealed !== null) {
        if (code === undefined) return { signedIn: false, needsCode: new AuthenticationCodeNeeded(false) };
        const secondFactorMember = {
          id: member.id,
          subsidiaryId: member.subsidiary_id,
          email: member.email,
          sealedSecret: member.totp_secret_sealed,
          lastTimeStep: member.totp_last_time_step === null ? null : Number(member.totp_last_time_step),
        };
        if (!(await this.secondFactor.verify(em, secondFactorMember, code, ip))) {
          await failed(WRONG_CODE_TARGET);
          return { signedIn: false, needsCode: new AuthenticationCodeNeeded(true) };
        }
      }
      const value = await open(em, {
        memberId: member.id,
        subsidiaryId: member.subsidiary_id,
        email: member.email,
        role: member.role,
        testOnly: member.test_only,
      });
      return { signedIn: true, value };
    });
  }

  /** Seconds until the account may try again, or undefined when it is under its limit. */
  private async limitedFor(sql: <R>(query: string, params: unknown[]) => Promise<R[]>, member: MemberRow): Promise<number | undefined> {
    const now = this.clock.now();
    const since = new Date(now.getTime() - this.limit.windowSeconds * 1000);
    const recent = await sql<{ at: Date }>(
      `select f.at from audit_entry f
        where f.subsidiary_id = ? and f.action = ? and f.actor_type = 'MEMBER' and f.actor_label = ? and f.target in (?, ?) and f.at > ?
          and f.at > coalesce((select max(s.at) from audit_entry s
                                where s.subsidiary_id = ? and s.action in (?, ?) and s.actor_type = 'MEMBER' and s.actor_label = ?), '-infinity')
        order by f.at desc limit ?`,
      [
        member.subsidiary_id,
        AuditActions.signInFailed,
        member.email,
        WRONG_PASSWORD_TARGET,
        WRONG_CODE_TARGET,
        since,
        member.subsidiary_id,
        AuditActions.signedIn,
        AuditActions.passwordReset,
        member.email,
        this.limit.failures,
      ],
    );
    if (recent.length < this.limit.failures) return undefined;
    const oldest = new Date(recent[recent.length - 1]!.at).getTime();
    return Math.max(1, Math.ceil((oldest + this.limit.windowSeconds * 1000 - now.getTime()) / 1000));
  }
}
