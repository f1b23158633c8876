import { Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { PageInfo } from '../connection';
import { EnvironmentModeEnum } from '../merchants/merchant.types';

export enum AuditActorTypeEnum {
  MEMBER = 'MEMBER',
  API_KEY = 'API_KEY',
  ADMIN = 'ADMIN',
  SYSTEM = 'SYSTEM',
}
registerEnumType(AuditActorTypeEnum, {
  name: 'AuditActorType',
  description: 'Who made a change: a member, an api-key (named by its hint), the platform admin, or the service itself.',
});

@ObjectType('AuditEntry', { description: 'One change or sign-in in the merchant’s audit log. Entries are never changed or deleted.' })
export class AuditEntryType {
  @Field(() => ID) id!: string;
  @Field() at!: Date;
  @Field({ description: 'e.g. link.created, link.updated, keys.rotated, webhook.url_set, session.signed_in.' }) action!: string;
  @Field(() => AuditActorTypeEnum) actorType!: AuditActorTypeEnum;
  @Field({ description: "A member's email, an api-key's hint (never the key), `admin` or `system`." }) actorLabel!: string;
  @Field(() => String, { nullable: true, description: 'What was changed: a link, a key kind, a URL, …' }) target!: string | null;
  @Field(() => String, { nullable: true, description: 'The address the change came from, when known.' }) ip!: string | null;
  @Field(() => EnvironmentModeEnum, { nullable: true, description: 'null for a change of the whole merchant.' }) environment!: EnvironmentModeEnum | null;
}

@ObjectType('AuditEntryEdge')
export class AuditEntryEdge {
  @Field() cursor!: string;
  @Field(() => AuditEntryType) node!: AuditEntryType;
}

@ObjectType('AuditEntryConnection')
export class AuditEntryConnection {
  @Field(() => [AuditEntryEdge]) edges!: AuditEntryEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

@InputType('AuditLogFilter', { description: 'Narrows the audit log; every field is optional.' })
export class AuditLogFilterInput {
  @Field(() => String, { nullable: true, description: 'One action, such as link.created or keys.rotated.' }) action?: string | null;
  @Field(() => AuditActorTypeEnum, { nullable: true }) actorType?: AuditActorTypeEnum | null;
  @Field(() => Date, { nullable: true, description: 'Entries at or after this instant.' }) from?: Date | null;
  @Field(() => Date, { nullable: true, description: 'Entries before this instant.' }) to?: Date | null;
}
