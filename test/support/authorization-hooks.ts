import { AuthorizationQueries } from '../../src/payments/authorization.queries';

/**
 * Runs `change` once, right before the first call of the capture and void queries' `method` that
 * `when` picks (every call unless told): a change another request or process makes between two
 * steps, at an exact point. Answers a function that removes the hook and tells whether `change` ran.
 */
export function changeBefore(
  method: 'writeSettlement' | 'insertClaimIfUnchanged',
  change: () => Promise<unknown>,
  when: (args: unknown[]) => boolean = () => true,
): () => boolean {
  const original = AuthorizationQueries.prototype[method] as (...args: unknown[]) => Promise<unknown>;
  let done = false;
  const spy = jest.spyOn(AuthorizationQueries.prototype, method).mockImplementation(async function (this: AuthorizationQueries, ...args: unknown[]) {
    if (!done && when(args)) {
      done = true;
      await change();
    }
    return original.apply(this, args);
  } as never);
  return () => {
    spy.mockRestore();
    return done;
  };
}

/** Runs `change` once, right before the first claim from rows read without locks is written (nothing is locked yet). */
export const changeBeforeClaim = (change: () => Promise<unknown>) => changeBefore('insertClaimIfUnchanged', change);
