import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, validationError } from '../shared/errors';
import { isEmail } from '../shared/validation';
import { isMemberRole, type MemberRole } from './member-role';

/** An invitation is valid this long, and once. */
export const INVITATION_TTL_MS = 72 * 3600 * 1000;

export interface InvitationView {
  email: string;
  role: MemberRole;
  /** Where the invited person sets their password; the token is its last path segment. */
  invitationUrl: string;
  expiresAt: Date;
}

export const INVITATION_INVALID = 'This invitation is not valid: it does not exist, was already used or has expired.';
export const invitationInvalid = (): DomainError => new DomainError('not_found', INVITATION_INVALID, 'INVITATION_INVALID');

export const hashInvitationToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Emails are compared case-insensitively: they are kept trimmed and lower-case. */
export function normalizeEmail(value: unknown): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!email || !isEmail(email)) throw validationError('The email is not a valid e-mail address.');
  return email;
}

export function parseMemberRole(value: unknown): MemberRole {
  if (!isMemberRole(value)) throw validationError('The role must be one of OWNER, ADMIN, DEVELOPER, SUPPORT, VIEWER.');
  return value;
}

/**
 * Records an invitation of `email` with `role` to the merchant's team (replacing any earlier one
 * not yet used for that email) and answers its URL, under the service's public URL. Only the
 * token's hash is stored: the URL is shown this once.
 */
export async function recordInvitation(
  em: EntityManager,
  invitation: { subsidiaryId: number; email: string; role: MemberRole; now: Date; publicUrl: string; testOnly?: boolean },
): Promise<InvitationView> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(invitation.now.getTime() + INVITATION_TTL_MS);
  const execute = (sql: string, params: unknown[]) => em.getConnection().execute(sql, params, 'run', em.getTransactionContext());
  await execute(`delete from member_invitation where subsidiary_id = ? and lower(email) = ? and accepted_at is null`, [
    invitation.subsidiaryId,
    invitation.email,
  ]);
  await execute(`insert into member_invitation (subsidiary_id, email, role, token_hash, expires_at, created_at, test_only) values (?, ?, ?, ?, ?, ?, ?)`, [
    invitation.subsidiaryId,
    invitation.email,
    invitation.role,
    hashInvitationToken(token),
    expiresAt,
    invitation.now,
    invitation.testOnly === true,
  ]);
  const base = invitation.publicUrl.replace(/\/+$/, '');
  return { email: invitation.email, role: invitation.role, invitationUrl: `${base}/dashboard/invitations/${token}`, expiresAt };
}
