import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { toDataURL } from 'qrcode';
import type { SecretBox } from '../crypto/secret-box';
import type { Clock } from '../shared/clock';
import { conflict, DomainError, forbidden, validationError } from '../shared/errors';
import { authorizeOwnAccount, MEMBER_GONE } from './authorization';
import { AuditActions, auditOriginOf, type AuditService } from './audit/audit.service';
import type { MemberRole } from './member-role';
import type { SecondFactorMember } from './member-sign-in';
import { MAX_PASSWORD_LENGTH, verifyPassword } from './password';
import type { Tenant } from './tenant';
import { hashRecoveryCode, matchTotp, newRecoveryCodes, newTotpSecret, recoveryCodeOf, totpCodeOf, totpUri } from './totp';

/** Where a member's TOTP secrets are sealed, and the context (associated data) of each (see master-key-rotation.ts). */
export const TOTP_SECRET_STORE = {
  active: { column: 'totp_secret_sealed', context: (memberId: number) => `member-totp:${memberId}` },
  pending: { column: 'totp_pending_secret_sealed', context: (memberId: number) => `member-totp-pending:${memberId}` },
} as const;

export const TOTP_ALREADY_ENABLED = 'Two-step sign-in is already on for your account: turn it off first to enrol another app.';
export const TOTP_NOT_STARTED = 'Start the enrolment first: there is no secret waiting for its first code.';
export const TOTP_NOT_ENABLED = 'Two-step sign-in is not on for your account.';
export const TOTP_CODE_INVALID = 'That authentication code is not valid: enter the current code from your authenticator app.';
export const PASSWORD_INVALID = 'That password is not right.';
export const CODE_OR_PASSWORD_REQUIRED = 'Give a current authentication code, or your password.';

/** What enrolment shows once: the secret, as text, as an otpauth:// URI and as its QR code (PNG data URL). */
export interface TotpEnrolment {
  secret: string;
  otpauthUri: string;
  qrCodeDataUrl: string;
}

/** The signed-in member's own account, as they see it. */
export interface AccountView {
  email: string;
  role: MemberRole;
  totpEnabled: boolean;
  /** Unused recovery codes (0 while two-step sign-in is off). */
  recoveryCodesLeft: number;
}

interface AccountRow {
  id: number;
  subsidiary_id: number;
  email: string;
  role: MemberRole;
  password_hash: string;
  totp_secret_sealed: string | null;
  totp_pending_secret_sealed: string | null;
  totp_last_time_step: string | null;
}

type Sql = <R>(query: string, params: unknown[]) => Promise<R[]>;

const codeInvalid = (): DomainError => new DomainError('validation', TOTP_CODE_INVALID, 'TOTP_CODE_INVALID');

/**
 * A member's optional second factor: a TOTP secret (RFC 6238) sealed under MASTER_KEY, and ten
 * single-use recovery codes stored as hashes. The member turns it on (a secret shown once, then
 * confirmed with a code from their app) and off (with a current code or their password), for
 * their own account only. At sign-in (`verify`), a code is accepted once: the time step of the
 * last accepted code is stored, and only a later step passes.
 */
export class MemberTotpService {
  constructor(
    private readonly orm: MikroORM,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /** The caller's own account: email, role, whether two-step sign-in is on, recovery codes left. */
  async account(principal: Tenant): Promise<AccountView> {
    return this.inAccount(principal, async (_em, sql, row) => ({
      email: row.email,
      role: row.role,
      totpEnabled: row.totp_secret_sealed !== null,
      recoveryCodesLeft: await this.recoveryCodesLeft(sql, row.id),
    }));
  }

  /** A new secret, waiting for its first code (a previous unconfirmed one is replaced). */
  async startEnrolment(principal: Tenant): Promise<TotpEnrolment> {
    const secret = newTotpSecret();
    const email = await this.inAccount(principal, async (_em, sql, row) => {
      if (row.totp_secret_sealed !== null) throw conflict(TOTP_ALREADY_ENABLED, 'TOTP_ALREADY_ENABLED');
      await sql(`update merchant_member set totp_pending_secret_sealed = ? where id = ?`, [
        this.box.seal(secret, TOTP_SECRET_STORE.pending.context(row.id)),
        row.id,
      ]);
      return row.email;
    });
    const otpauthUri = totpUri(secret, email);
    return { secret, otpauthUri, qrCodeDataUrl: await toDataURL(otpauthUri, { errorCorrectionLevel: 'M', margin: 2, width: 220 }) };
  }

  /** Turns two-step sign-in on with a code of the waiting secret; answers the ten recovery codes, shown this once. */
  async confirmEnrolment(principal: Tenant, codeInput: unknown): Promise<string[]> {
    const code = typeof codeInput === 'string' ? totpCodeOf(codeInput) : undefined;
    return this.inAccount(principal, async (em, sql, row) => {
      if (row.totp_secret_sealed !== null) throw conflict(TOTP_ALREADY_ENABLED, 'TOTP_ALREADY_ENABLED');
      if (row.totp_pending_secret_sealed === null) throw conflict(TOTP_NOT_STARTED, 'TOTP_NOT_STARTED');
      const secret = this.box.open(row.totp_pending_secret_sealed, TOTP_SECRET_STORE.pending.context(row.id));
      const now = this.clock.now();
      const step = code === undefined ? undefined : await matchTotp(secret, code, now, null);
      if (step === undefined) throw codeInvalid();
      // The confirming code is used: it cannot sign in afterwards.
      await sql(
        `update merchant_member set totp_secret_sealed = ?, totp_pending_secret_sealed = null, totp_enabled_at = ?, totp_last_time_step = ? where id = ?`,
        [this.box.seal(secret, TOTP_SECRET_STORE.active.context(row.id)), now, step, row.id],
      );
      await sql(`delete from member_recovery_code where member_id = ?`, [row.id]);
      const codes = newRecoveryCodes();
      for (const recovery of codes) {
        await sql(`insert into member_recovery_code (member_id, code_hash, created_at) values (?, ?, ?)`, [row.id, hashRecoveryCode(recovery), now]);
      }
      await this.audit.record(em, { ...auditOriginOf(principal), action: AuditActions.totpEnabled, subsidiaryId: row.subsidiary_id, target: row.email });
      return codes;
    });
  }

  /** Turns two-step sign-in off, given a current code (or a recovery code) or the member's password. */
  async disable(principal: Tenant, input: { code?: unknown; password?: unknown }): Promise<boolean> {
    const code = typeof input.code === 'string' && input.code.trim() !== '' ? input.code : undefined;
    const password = typeof input.password === 'string' && input.password !== '' ? input.password : undefined;
    if (code === undefined && password === undefined) throw validationError(CODE_OR_PASSWORD_REQUIRED);
    return this.inAccount(principal, async (em, sql, row) => {
      if (row.totp_secret_sealed === null) throw conflict(TOTP_NOT_ENABLED, 'TOTP_NOT_ENABLED');
      if (code !== undefined) {
        const member = { id: row.id, subsidiaryId: row.subsidiary_id, email: row.email, sealedSecret: row.totp_secret_sealed, lastTimeStep: stepOf(row) };
        if (!(await this.verify(em, member, code, principal.ip ?? null))) throw codeInvalid();
      } else if (password!.length > MAX_PASSWORD_LENGTH || !(await verifyPassword(password!, row.password_hash))) {
        throw new DomainError('validation', PASSWORD_INVALID, 'PASSWORD_INVALID');
      }
      await sql(
        `update merchant_member set totp_secret_sealed = null, totp_pending_secret_sealed = null, totp_enabled_at = null, totp_last_time_step = null where id = ?`,
        [row.id],
      );
      await sql(`delete from member_recovery_code where member_id = ?`, [row.id]);
      await this.audit.record(em, { ...auditOriginOf(principal), action: AuditActions.totpDisabled, subsidiaryId: row.subsidiary_id, target: row.email });
      return true;
    });
  }

  /**
   * The second step of a sign-in, inside its transaction: true for a TOTP code of a step later
   * than the last one accepted (which it becomes), or for an unused recovery code (then used).
   * Both are conditional updates, so two attempts with one code at once cannot both pass.
   */
  async verify(em: EntityManager, member: SecondFactorMember, input: string, ip: string | null): Promise<boolean> {
    const sql: Sql = (query, params) => em.getConnection().execute(query, params, 'all', em.getTransactionContext());
    if (input.length > 64) return false;
    const now = this.clock.now();
    const code = totpCodeOf(input);
    if (code !== undefined) {
      const secret = this.box.open(member.sealedSecret, TOTP_SECRET_STORE.active.context(member.id));
      const step = await matchTotp(secret, code, now, member.lastTimeStep);
      if (step === undefined) return false;
      const accepted = await sql(
        `update merchant_member set totp_last_time_step = ? where id = ? and (totp_last_time_step is null or totp_last_time_step < ?) returning id`,
        [step, member.id, step],
      );
      return accepted.length === 1;
    }
    const recovery = recoveryCodeOf(input);
    if (recovery === undefined) return false;
    const used = await sql(`update member_recovery_code set used_at = ? where member_id = ? and code_hash = ? and used_at is null returning id`, [
      now,
      member.id,
      hashRecoveryCode(recovery),
    ]);
    if (used.length === 0) return false;
    const left = await this.recoveryCodesLeft(sql, member.id);
    await this.audit.record(em, {
      action: AuditActions.recoveryCodeUsed,
      subsidiaryId: member.subsidiaryId,
      actor: { type: 'MEMBER', label: member.email },
      ip,
      target: `${left} recovery code${left === 1 ? '' : 's'} left`,
    });
    return true;
  }

  private async recoveryCodesLeft(sql: Sql, memberId: number): Promise<number> {
    const [row] = await sql<{ n: string }>(`select count(*) as n from member_recovery_code where member_id = ? and used_at is null`, [memberId]);
    return Number(row!.n);
  }

  /** Runs `work` on the caller's own member row, locked: changes to one account take turns with its sign-ins. */
  private inAccount<T>(principal: Tenant, work: (em: EntityManager, sql: Sql, row: AccountRow) => Promise<T>): Promise<T> {
    const member = authorizeOwnAccount(principal);
    return this.orm.em.fork().transactional(async (em) => {
      const sql: Sql = (query, params) => em.getConnection().execute(query, params, 'all', em.getTransactionContext());
      const [row] = await sql<AccountRow>(
        `select id, subsidiary_id, email, role, password_hash, totp_secret_sealed, totp_pending_secret_sealed, totp_last_time_step
           from merchant_member where id = ? and subsidiary_id = ? for update`,
        [member.memberId, principal.subsidiaryId],
      );
      if (!row) throw forbidden(MEMBER_GONE);
      return work(em, sql, row);
    });
  }
}

function stepOf(row: { totp_last_time_step: string | null }): number | null {
  return row.totp_last_time_step === null ? null : Number(row.totp_last_time_step);
}
