import { Query, Resolver } from 'type-graphql';

@Resolver()
export class HealthResolver {
  @Query(() => String, { description: 'The only operation that needs no api-key.' })
  health(): string {
    return 'ok';
  }
}
