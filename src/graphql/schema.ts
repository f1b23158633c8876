import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { authChecker } from './auth-checker';
import { HealthResolver } from './health.resolver';
import { MerchantResolver } from './merchants/merchant.resolver';

export const RESOLVERS = [HealthResolver, MerchantResolver] as const;

let cached: Promise<GraphQLSchema> | undefined;

/** The schema, built from the resolver classes; schema.graphql is its printed form. */
export function buildGraphqlSchema(): Promise<GraphQLSchema> {
  cached ??= buildSchema({
    resolvers: [...RESOLVERS],
    authChecker,
    authMode: 'error',
    validate: false,
  });
  return cached;
}
