/** The actions the audit log names today (more come with members, refunds, captures, disputes). */
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
} as const;

export type AuditAction = (typeof AuditActions)[keyof typeof AuditActions];
