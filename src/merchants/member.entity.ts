import { OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Subsidiary } from './subsidiary.entity';
import { MEMBER_ROLES, type MemberRole } from './member-role';

/**
 * A person of a merchant's team: an email (stored lower-case, unique per merchant), a scrypt
 * password hash with its own salt and parameters (see password.ts) and one role.
 */
@Entity({ tableName: 'merchant_member' })
@Index({
  name: 'merchant_member_subsidiary_email_unique',
  expression: 'create unique index "merchant_member_subsidiary_email_unique" on "merchant_member" ("subsidiary_id", lower("email"))',
})
export class Member {
  [OptionalProps]?: 'createdAt' | 'testOnly' | 'totpSecretSealed' | 'totpPendingSecretSealed' | 'totpEnabledAt' | 'totpLastTimeStep';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => Subsidiary, { deleteRule: 'cascade' })
  subsidiary!: Subsidiary;

  @Property({ type: 'text' })
  email!: string;

  @Property({ type: 'text' })
  passwordHash!: string;

  @Enum({ items: () => [...MEMBER_ROLES] })
  role!: MemberRole;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  /** Works in the test environment only: invited with a test-mode credential (authorization.ts, testModeOnly). */
  @Property({ type: 'boolean', default: false })
  testOnly: boolean = false;

  /** The TOTP secret while the second factor is on, sealed under MASTER_KEY (member-totp.ts). */
  @Property({ type: 'text', nullable: true })
  totpSecretSealed: string | null = null;

  /** A secret shown for enrolment and not yet confirmed with a code, sealed likewise. */
  @Property({ type: 'text', nullable: true })
  totpPendingSecretSealed: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  totpEnabledAt: Date | null = null;

  /** The time step of the last code accepted: a code of this step or an earlier one is refused. */
  @Property({ type: 'bigint', nullable: true })
  totpLastTimeStep: string | null = null;
}

/** A recovery code of a member's second factor: only its SHA-256 is stored, and it works once. */
@Entity({ tableName: 'member_recovery_code' })
@Unique({ properties: ['member', 'codeHash'] })
export class MemberRecoveryCode {
  [OptionalProps]?: 'createdAt' | 'usedAt';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => Member, { deleteRule: 'cascade' })
  member!: Member;

  @Property({ type: 'string', length: 64, columnType: 'char(64)' })
  codeHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  usedAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}

/** An invitation to join a merchant's team: only the SHA-256 of its token is stored; used once, within its expiry. */
@Entity({ tableName: 'member_invitation' })
@Index({
  name: 'member_invitation_subsidiary_email_index',
  expression: 'create index "member_invitation_subsidiary_email_index" on "member_invitation" ("subsidiary_id", lower("email"))',
})
export class MemberInvitation {
  [OptionalProps]?: 'createdAt' | 'acceptedAt' | 'testOnly';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => Subsidiary, { deleteRule: 'cascade' })
  subsidiary!: Subsidiary;

  @Property({ type: 'text' })
  email!: string;

  @Enum({ items: () => [...MEMBER_ROLES] })
  role!: MemberRole;

  @Property({ type: 'string', length: 64, columnType: 'char(64)', unique: true })
  tokenHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)' })
  expiresAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  acceptedAt: Date | null = null;

  /** The member it makes works in the test environment only (see Member.testOnly). */
  @Property({ type: 'boolean', default: false })
  testOnly: boolean = false;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}

/**
 * A link to choose a new password: only the SHA-256 of its token is stored; used once, within its
 * expiry (an hour). Asked for by the member (emailed) or made for them by an owner or admin.
 */
@Entity({ tableName: 'member_password_reset' })
export class MemberPasswordReset {
  [OptionalProps]?: 'createdAt' | 'usedAt';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => Member, { deleteRule: 'cascade', index: true })
  member!: Member;

  @Property({ type: 'string', length: 64, columnType: 'char(64)', unique: true })
  tokenHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)' })
  expiresAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  usedAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
