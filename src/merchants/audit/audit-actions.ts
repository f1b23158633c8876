/** The actions the audit log names today (more come with refunds, captures, disputes). */
export const AuditActions = {
  linkCreated: 'link.created',
  linkUpdated: 'link.updated',
  keysRotated: 'keys.rotated',
  webhookUrlSet: 'webhook.url_set',
  webhookSecretRotated: 'webhook.secret_rotated',
  settingsUpdated: 'settings.updated',
  recurringCancelled: 'recurring.cancelled',
  /** An Authorized order's money taken (all or part), once the processor confirmed it. */
  orderCaptured: 'order.captured',
  /** An Authorized order's money released, by the merchant or because it was not captured in time. */
  orderVoided: 'order.voided',
  merchantCreated: 'merchant.created',
  signedIn: 'session.signed_in',
  signInFailed: 'session.sign_in_failed',
  memberInvited: 'member.invited',
  memberJoined: 'member.joined',
  memberRoleChanged: 'member.role_changed',
  memberRemoved: 'member.removed',
} as const;

export type AuditAction = (typeof AuditActions)[keyof typeof AuditActions];
