/** The actions the audit log names today. */
export const AuditActions = {
  linkCreated: 'link.created',
  linkUpdated: 'link.updated',
  keysRotated: 'keys.rotated',
  webhookUrlSet: 'webhook.url_set',
  webhookSecretRotated: 'webhook.secret_rotated',
  settingsUpdated: 'settings.updated',
  recurringCancelled: 'recurring.cancelled',
  refundCreated: 'refund.created',
  /** An Authorized order's money taken (all or part), once the processor confirmed it. */
  orderCaptured: 'order.captured',
  /** An Authorized order's money released, by the merchant or because it was not captured in time. */
  orderVoided: 'order.voided',
  disputeEvidenceSubmitted: 'dispute.evidence_submitted',
  disputeAccepted: 'dispute.accepted',
  merchantCreated: 'merchant.created',
  signedIn: 'session.signed_in',
  signInFailed: 'session.sign_in_failed',
  memberInvited: 'member.invited',
  memberJoined: 'member.joined',
  memberRoleChanged: 'member.role_changed',
  memberRemoved: 'member.removed',
  passwordResetLinkCreated: 'member.password_reset_link_created',
  passwordResetRequested: 'member.password_reset_requested',
  passwordReset: 'member.password_reset',
  emailFailed: 'email.failed',
  totpEnabled: 'member.totp_enabled',
  totpDisabled: 'member.totp_disabled',
  recoveryCodeUsed: 'session.recovery_code_used',
} as const;

export type AuditAction = (typeof AuditActions)[keyof typeof AuditActions];
