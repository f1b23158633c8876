import { Authorized, Ctx, Field, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';

@ObjectType('Bank')
export class BankType {
  @Field(() => Int) id!: number;
  @Field() name!: string;
  @Field(() => Int, { description: 'ISO 3166-1 numeric' }) countryId!: number;
  @Field() bankCode!: string;
  @Field(() => Boolean, { nullable: true }) isMicrofinance!: boolean | null;
  @Field(() => Boolean, { nullable: true }) isMortgage!: boolean | null;
  @Field(() => String, { nullable: true }) ussdBankCode!: string | null;
  @Field() logo!: string;
}

@Resolver()
export class ReferenceResolver {
  @Authorized('client')
  @Query(() => [BankType])
  async banks(@Ctx() ctx: GraphqlContext): Promise<BankType[]> {
    const banks = ctx.services.banks;
    return (await banks.list()).map((b) => ({ ...b, logo: banks.logoUrl(b) }));
  }
}
