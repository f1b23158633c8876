/** The actions the audit log names today (more come with refunds, captures, disputes). */
export const AuditActions = {
  linkCreated: 'link.created',
  linkUpdated: 'link.updated',
  keysRotated: 'keys.rotated',
  webhookUrlSet: 'webhook.url_set',
  webhookSecretRotated: 'webhook.secret_rotated',
  settingsUpdated: 'settings.updated',
  recurringCancelled: 'recurring.cancelled',
  merchantCreated: 'merchant.created',
  signedIn: 'session.signed_in',
  signInFailed: 'session.sign_in_failed',
  memberInvited: 'member.invited',
  memberJoined: 'member.joined',
  memberRoleChanged: 'member.role_changed',
  memberRemoved: 'member.removed',
  totpEnabled: 'member.totp_enabled',
  totpDisabled: 'member.totp_disabled',
  recoveryCodeUsed: 'session.recovery_code_used',
} as const;

export type AuditAction = (typeof AuditActions)[keyof typeof AuditActions];
