import { useState } from 'preact/hooks';
import { MEMBER_ROLES } from '../../src/merchants/member-role';
import type { ActionClass } from '../../src/merchants/action-class';
import { currentSession, gql, may } from './api';
import { CopyButton, ErrorNote, messageOf, useData, when } from './ui';

const MEMBERS = `query Members { members { email role createdAt testOnly } }`;
const INVITE = `mutation Invite($input: InviteMemberInput!) { inviteMember(input: $input) { email role invitationUrl expiresAt } }`;
const CHANGE_ROLE = `mutation ChangeRole($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { email role } }`;
const REMOVE = `mutation Remove($email: String!) { removeMember(email: $email) }`;

/** What each action class lets a member do, in words (which roles have which classes is the service's table, not this page's). */
const ACTION_WORDS: Record<ActionClass, string> = {
  client: 'start and pay orders as a customer would',
  read: 'see orders, payment links, refunds, disputes and the overview',
  'links.write': 'create, edit and disable payment links',
  'payments.write': 'refund, capture, void and answer disputes',
  developers: 'manage webhooks and the public and encryption keys',
  secrets: 'rotate the private key and the signing secret, change settings, read the audit log',
  members: 'invite members, change their roles and remove them',
};

const roleName = (role: string) => role.charAt(0) + role.slice(1).toLowerCase();

function RoleSelect(props: { id: string; name: string; value?: string; label: string }) {
  return (
    <select id={props.id} name={props.name} aria-label={props.label}>
      {MEMBER_ROLES.map((role) => (
        <option value={role} selected={role === (props.value ?? 'VIEWER')}>
          {roleName(role)}
        </option>
      ))}
    </select>
  );
}

/** Invites a person with a role and shows the invitation URL once, to copy and send them. */
function Invite(props: { onInvited: () => void }) {
  const [error, setError] = useState<string>();
  const [invitation, setInvitation] = useState<{ email: string; role: string; invitationUrl: string; expiresAt: string } | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <section class="panel" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite a member</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const data = new FormData(form);
          setError(undefined);
          setInvitation(null);
          setBusy(true);
          try {
            const r = await gql(INVITE, { input: { email: String(data.get('email') ?? '').trim(), role: String(data.get('role')) } });
            setInvitation(r.inviteMember);
            form.reset();
            props.onInvited();
          } catch (err) {
            setError(messageOf(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <div class="field">
          <label for="invite-email">Email</label>
          <input id="invite-email" name="email" type="email" required spellcheck={false} />
        </div>
        <div class="field">
          <label for="invite-role">Role</label>
          <RoleSelect id="invite-role" name="role" label="Role" />
        </div>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Invite
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
      {invitation && (
        <div class="panel saved" role="status">
          <p>
            Invitation of <strong>{invitation.email}</strong> as {roleName(invitation.role)}, valid once until {when(invitation.expiresAt)}. Send them this
            address (it is shown only now):
          </p>
          <code class="secret invitation-url">{invitation.invitationUrl}</code> <CopyButton text={invitation.invitationUrl} label="Copy invitation URL" />
        </div>
      )}
    </section>
  );
}

/** One member: their role can be changed, and they can be removed after a confirmation. */
function MemberRow(props: { member: { email: string; role: string; createdAt: string; testOnly: boolean }; reachesLive: boolean; onChange: () => void }) {
  const m = props.member;
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const act = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
      setConfirming(false);
      props.onChange();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <tr class="member" data-member-email={m.email}>
      <td>{m.email}</td>
      <td data-role={m.role}>
        {roleName(m.role)}
        {m.testOnly ? (
          <span class="muted" data-test-only title="Invited with the test key: works in the test environment only">
            {' '}
            (test only)
          </span>
        ) : null}
      </td>
      <td>{when(m.createdAt)}</td>
      <td>
        <form
          class="inline"
          aria-label={`Role of ${m.email}`}
          onSubmit={(e) => {
            e.preventDefault();
            const data = new FormData(e.currentTarget as HTMLFormElement);
            const role = String(data.get('role'));
            // Only a member who works in live changes where others work; the service checks it again.
            const reach = props.reachesLive ? { testOnly: data.get('testOnly') === 'on' } : {};
            void act(() => gql(CHANGE_ROLE, { input: { email: m.email, role, ...reach } }));
          }}
        >
          <RoleSelect id={`role-${m.email}`} name="role" value={m.role} label={`New role of ${m.email}`} />{' '}
          {props.reachesLive ? (
            <label class="inline">
              <input type="checkbox" name="testOnly" checked={m.testOnly} aria-label={`${m.email} works in test only`} /> Test only
            </label>
          ) : null}{' '}
          <button type="submit" class="secondary">
            Change role <span class="sr-only">of {m.email}</span>
          </button>{' '}
          <button type="button" class="secondary" disabled={confirming} onClick={() => setConfirming(true)}>
            Remove <span class="sr-only">{m.email}</span>
          </button>
        </form>
        {confirming && (
          <div class="panel confirm" role="alertdialog" aria-labelledby={`remove-${m.email}`}>
            <p id={`remove-${m.email}`}>Remove {m.email} from the team? Their open sessions end at once.</p>
            <div class="actions">
              <button type="button" onClick={() => void act(() => gql(REMOVE, { email: m.email }))}>
                Yes, remove
              </button>
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </div>
          </div>
        )}
        <ErrorNote error={error} />
      </td>
    </tr>
  );
}

function Members(props: { reachesLive: boolean }) {
  const list = useData(() => gql(MEMBERS), []);
  return (
    <>
      <Invite onInvited={list.reload} />
      <section class="panel" aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <ErrorNote error={list.error} />
        {list.data && (
          <table class="members">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Since</th>
                <th scope="col">Manage</th>
              </tr>
            </thead>
            <tbody>
              {list.data.members.map((m: { email: string; role: string; createdAt: string; testOnly: boolean }) => (
                <MemberRow key={m.email} member={m} reachesLive={props.reachesLive} onChange={list.reload} />
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

/** The team: who the signed-in member is and what their role allows; members and invitations for a role that manages them. */
export function Team() {
  const session = currentSession()!;
  return (
    <>
      <h1>Team</h1>
      <section class="panel" aria-labelledby="you-heading">
        <h2 id="you-heading">You</h2>
        <p>
          Signed in as <strong>{session.member.email}</strong>, {roleName(session.member.role)}. Your role may:
        </p>
        <ul class="may">
          {session.actions
            .filter((action) => action !== 'client')
            .map((action) => (
              <li data-action={action}>{ACTION_WORDS[action]}</li>
            ))}
        </ul>
      </section>
      {may('members') ? (
        <Members reachesLive={session.environments.includes('live')} />
      ) : (
        <p class="muted">Owners and admins invite members and change their roles.</p>
      )}
    </>
  );
}
