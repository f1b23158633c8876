import 'reflect-metadata';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { WsSession } from '../graphql/ws-session';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { MemberRole } from '../../../src/merchants/member-role';

const PASSWORD = 'correct horse battery';
const ROLES: MemberRole[] = ['OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER'];

interface Operation {
  query: string;
  variables?: () => Record<string, unknown>;
  /** What an allowed role gets back. */
  allowed: (result: { data?: any; errors?: any[] }) => void;
}

let invited = 0;

/**
 * One GraphQL operation per line of the team roles table (docs/team.md), with the roles that
 * line allows, written out here rather than read from the code, so a change to the code's
 * table shows up as a failure.
 */
const TABLE: Record<string, { roles: MemberRole[]; operation: Operation }> = {
  'read orders, links and the summary': {
    roles: ['OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER'],
    operation: { query: `{ orders(first: 1) { totalCount } }`, allowed: (r) => expect(typeof r.data.orders.totalCount).toBe('number') },
  },
  'create and edit links': {
    roles: ['OWNER', 'ADMIN', 'SUPPORT'],
    operation: {
      query: `mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { name } }`,
      variables: () => ({ input: { name: 'Matrix link', description: 'made in the role matrix', paymentType: 'MC' } }),
      allowed: (r) => expect(r.data.createPaymentLink.name).toBe('Matrix link'),
    },
  },
  'refund, capture, void, answer disputes, cancel subscriptions': {
    roles: ['OWNER', 'ADMIN', 'SUPPORT'],
    // Allowed, it looks for the subscription, which does not exist.
    operation: {
      query: `mutation { cancelRecurringPayment(reference: "NO-SUCH-SUBSCRIPTION") }`,
      allowed: (r) => expect(r.errors![0].extensions.code).toBe('13'),
    },
  },
  'webhook URL, test pings, deliveries, public and encryption keys': {
    roles: ['OWNER', 'ADMIN', 'DEVELOPER'],
    operation: { query: `mutation { setWebhookUrl(url: null) { webhookUrl } }`, allowed: (r) => expect(r.data.setWebhookUrl.webhookUrl).toBeNull() },
  },
  'private key, signing secret, settings': {
    roles: ['OWNER', 'ADMIN'],
    operation: {
      query: `mutation { rotateKeys(input: { keys: [PRIVATE] }) { privateKey } }`,
      allowed: (r) => expect(r.data.rotateKeys.privateKey).toMatch(/^PGW-SECRETKEY-/),
    },
  },
  'invite, change and remove members': {
    roles: ['OWNER', 'ADMIN'],
    operation: {
      query: `mutation ($email: String!) { inviteMember(input: { email: $email, role: VIEWER }) { email } }`,
      variables: () => ({ email: `invited-${++invited}@matrix.example` }),
      allowed: (r) => expect(r.data.inviteMember.email).toMatch(/^invited-\d+@matrix\.example$/),
    },
  },
};

const CASES = ROLES.flatMap((role) => Object.entries(TABLE).map(([line, { roles, operation }]) => ({ role, line, allowed: roles.includes(role), operation })));

function expectOutcome(result: { data?: any; errors?: any[] }, allowed: boolean, operation: Operation): void {
  if (allowed) {
    expect(result.errors?.[0]?.extensions?.code).not.toBe('FORBIDDEN');
    operation.allowed(result);
  } else {
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(result.data ?? null).toBeNull();
  }
}

/** Each role of a member's dashboard session is held to the team roles table, over HTTP and over WebSocket alike. */
describe('the team roles table, for member sessions', () => {
  let t: TestService;
  let m: CreatedMerchant;
  const sessions = new Map<MemberRole, { cookie: string; csrfToken: string }>();

  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT_AUTH_FAILURES: '1000' });
    m = await createTestMerchant(t);
    for (const role of ROLES) {
      const email = `${role.toLowerCase()}@matrix.example`;
      const invitation = await request(t.baseUrl, 'POST', '/graphql', {
        apiKey: m.keys.test.privateKey,
        body: { query: `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { invitationUrl } }`, variables: { input: { email, role } } },
      });
      const token = invitation.body.data.inviteMember.invitationUrl.split('/').pop();
      const accepted = await request(t.baseUrl, 'POST', '/graphql', {
        body: {
          query: `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { role } }`,
          variables: { input: { token, password: PASSWORD } },
        },
      });
      expect(accepted.body.data.acceptInvitation.role).toBe(role);
      const signedIn = await request(t.baseUrl, 'POST', '/dashboard/session', { body: { email, password: PASSWORD } });
      expect(signedIn.status).toBe(200);
      sessions.set(role, { cookie: signedIn.headers.get('set-cookie')!.split(';')[0]!, csrfToken: signedIn.body.csrfToken });
    }
  }, 60_000);
  afterAll(async () => t.close());

  it.each(CASES)('over HTTP, $role: $line (allowed: $allowed)', async ({ role, allowed, operation }) => {
    const session = sessions.get(role)!;
    const res = await request(t.baseUrl, 'POST', '/graphql', {
      body: { query: operation.query, variables: operation.variables?.() ?? {} },
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'x-environment': 'test' },
    });
    expectOutcome(res.body, allowed, operation);
  });

  it.each(ROLES)('over WebSocket, %s: every line of the table as over HTTP', async (role) => {
    const session = sessions.get(role)!;
    const ws = await WsSession.open(t.baseUrl, { 'csrf-token': session.csrfToken, environment: 'test' }, { cookie: session.cookie, origin: t.baseUrl });
    try {
      expect(ws.messages[0]!.type).toBe('connection_ack');
      for (const [i, { line, allowed, operation }] of CASES.filter((c) => c.role === role).entries()) {
        ws.subscribe(String(i), operation.query, operation.variables?.() ?? {});
        const message = await ws.result(String(i));
        // A refused operation may come as an `error` message (its payload the errors) or as a result with errors.
        const result = message.type === 'error' ? { errors: message.payload } : message.payload;
        try {
          expectOutcome(result, allowed, operation);
        } catch (e) {
          throw new Error(`${role}, ${line}: ${(e as Error).message}`);
        }
      }
    } finally {
      ws.close();
    }
  });
});
