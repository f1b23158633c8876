import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import type { MemberRole } from '../../src/merchants/member-role';
import { request } from './http';

/** The password every member made by these helpers signs in with (12 characters or more). */
export const MEMBER_PASSWORD = 'correct horse battery staple';

export interface TestMember {
  email: string;
  password: string;
  role: MemberRole;
}

const INVITE = `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { invitationUrl } }`;
const ACCEPT = `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email role } }`;

/**
 * A member of the merchant, made as a merchant makes one: the private key invites (it acts as an
 * owner) and the invited person accepts the invitation with a password, over GraphQL.
 */
export async function addMember(baseUrl: string, privateKey: string, email: string, role: MemberRole, password = MEMBER_PASSWORD): Promise<TestMember> {
  const invited = await request(baseUrl, 'POST', '/graphql', { apiKey: privateKey, body: { query: INVITE, variables: { input: { email, role } } } });
  const url: string | undefined = invited.body?.data?.inviteMember?.invitationUrl;
  if (!url) throw new Error(`inviting ${email} failed: ${invited.text}`);
  const accepted = await request(baseUrl, 'POST', '/graphql', { body: { query: ACCEPT, variables: { input: { token: url.split('/').pop(), password } } } });
  if (accepted.body?.errors) throw new Error(`accepting the invitation of ${email} failed: ${accepted.text}`);
  return { email: accepted.body.data.acceptInvitation.email, password, role };
}

const owners = new Map<string, Promise<TestMember>>();

/** The merchant's owner (made on first use, once per service and merchant, invited with the live key: an owner who works in both environments), who signs in to the dashboard. */
export function ownerOf(baseUrl: string, merchant: CreatedMerchant): Promise<TestMember> {
  const key = `${baseUrl} ${merchant.subsidiary.id}`;
  let owner = owners.get(key);
  if (!owner) {
    owner = addMember(baseUrl, merchant.keys.live.privateKey, `owner-${merchant.subsidiary.id}@merchant.test`, 'OWNER');
    owners.set(key, owner);
  }
  return owner;
}

export interface DashboardSession {
  /** What the sign-in answered: `{ csrfToken, environment, environments, expiresAt, merchantName, member, actions }`. */
  body: any;
  /** The `name=value` of the session cookie. */
  cookie: string;
  /** The headers of a GraphQL request of this session in an environment. */
  headers(environment?: string): Record<string, string>;
}

/** Signs a member in to the dashboard over HTTP, as the sign-in form does. */
export async function signInMember(baseUrl: string, member: { email: string; password: string }): Promise<DashboardSession> {
  const res = await request(baseUrl, 'POST', '/dashboard/session', { body: { email: member.email, password: member.password } });
  if (res.status !== 200) throw new Error(`signing ${member.email} in failed: HTTP ${res.status} ${res.text}`);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  return {
    body: res.body,
    cookie,
    headers: (environment?: string) => ({ cookie, 'x-csrf-token': res.body.csrfToken, ...(environment ? { 'x-environment': environment } : {}) }),
  };
}
