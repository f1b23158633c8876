/** The roles a merchant's member can have, most powerful first. */
export const MEMBER_ROLES = ['OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export function isMemberRole(value: unknown): value is MemberRole {
  return typeof value === 'string' && (MEMBER_ROLES as readonly string[]).includes(value);
}

/** A member acting for the merchant (a signed-in person, not an api-key). */
export interface MemberPrincipal {
  memberId: number;
  email: string;
  role: MemberRole;
  /** Works in the test environment only (invited with a test-mode credential). */
  testOnly: boolean;
}
