import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DecimalScalar } from '../scalars';

export enum RefundStatusEnum {
  PENDING = 'PENDING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
}
registerEnumType(RefundStatusEnum, { name: 'RefundStatus', description: 'PENDING: with the processor; SUCCEEDED and FAILED are final.' });

@ObjectType('Refund', { description: 'Money given back on a paid order, in whole or in part.' })
export class RefundType {
  @Field(() => ID) id!: string;
  @Field() orderReference!: string;
  @Field(() => DecimalScalar) amount!: string;
  @Field() currency!: string;
  @Field(() => RefundStatusEnum) status!: RefundStatusEnum;
  @Field(() => String, { nullable: true, description: "The merchant's reason, as given." }) reason!: string | null;
  @Field(() => String, { nullable: true, description: 'Why the processor refused it (FAILED only).' }) failureReason!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@InputType()
export class RefundOrderInput {
  @Field({ description: 'The order, by its reference.' }) reference!: string;
  @Field(() => DecimalScalar, { nullable: true, description: 'At most two decimal places; absent: all that remains of the balance.' })
  amount?: string | null;
  @Field(() => String, { nullable: true, description: 'At most 500 characters.' }) reason?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'The same key with the same reference and amount answers the first refund again; with another, IDEMPOTENCY_KEY_REUSED. Per environment.',
  })
  idempotencyKey?: string | null;
}

@ObjectType('RefundedVolume', { description: 'The SUCCEEDED refunds of one currency asked for in the period.' })
export class RefundedVolumeType {
  @Field() currency!: string;
  @Field(() => Int) count!: number;
  @Field(() => DecimalScalar) amount!: string;
}
