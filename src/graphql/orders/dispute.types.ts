import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DecimalScalar } from '../scalars';
import { PageInfo } from '../connection';

export enum DisputeStatusEnum {
  NEEDS_RESPONSE = 'NEEDS_RESPONSE',
  UNDER_REVIEW = 'UNDER_REVIEW',
  WON = 'WON',
  LOST = 'LOST',
  ACCEPTED = 'ACCEPTED',
}
registerEnumType(DisputeStatusEnum, {
  name: 'DisputeStatus',
  description:
    'NEEDS_RESPONSE: the merchant may answer until evidenceDueBy; UNDER_REVIEW: evidence went in, the processor decides; WON, LOST and ACCEPTED are final.',
});

@ObjectType('Dispute', { description: "A chargeback the cardholder's bank opened against a paid order." })
export class DisputeType {
  @Field(() => ID) id!: string;
  @Field() orderReference!: string;
  @Field(() => DecimalScalar, { description: 'The amount disputed; taken off the balance once LOST or ACCEPTED.' }) amount!: string;
  @Field() currency!: string;
  @Field({ description: "The bank's reason, as the processor names it (e.g. fraudulent)." }) reason!: string;
  @Field(() => DisputeStatusEnum) status!: DisputeStatusEnum;
  @Field({ description: 'The deadline of the answer: a dispute still NEEDS_RESPONSE then is LOST.' }) evidenceDueBy!: Date;
  @Field(() => String, { nullable: true, description: 'The evidence submitted, if any.' }) evidence!: string | null;
  @Field(() => Date, { nullable: true, description: 'When it became WON, LOST or ACCEPTED.' }) decidedAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('DisputeEdge')
export class DisputeEdge {
  @Field() cursor!: string;
  @Field(() => DisputeType) node!: DisputeType;
}

@ObjectType('DisputeConnection')
export class DisputeConnection {
  @Field(() => [DisputeEdge]) edges!: DisputeEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

@InputType()
export class SubmitDisputeEvidenceInput {
  @Field(() => ID, { description: 'The dispute.' }) id!: string;
  @Field({ description: 'What proves the sale (delivery, correspondence, terms): 1 to 10000 characters.' }) text!: string;
}

@ObjectType('DisputedVolume', { description: 'The disputes of one currency opened in the period.' })
export class DisputedVolumeType {
  @Field() currency!: string;
  @Field(() => Int) count!: number;
  @Field(() => DecimalScalar, { description: 'Sum of the amounts disputed.' }) amount!: string;
  @Field(() => DecimalScalar, { description: 'Sum of the amounts of those LOST or ACCEPTED.' }) lost!: string;
}
