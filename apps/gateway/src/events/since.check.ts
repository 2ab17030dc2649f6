import { ValidationFailedError } from '@parley/contracts';
import type { ParleyStore } from '@parley/store';

/**
 * Refuses a `since` no event of the tenant can have yet (a cursor of another deployment, or made up):
 * a subscription from there would wait, silent, until the tenant's seqs passed it.
 */
export async function assertSinceIssued(store: ParleyStore, tenant: string, since: number | undefined, where: string): Promise<void> {
  if (since === undefined) {
    return;
  }
  const check = await store.events.issued(tenant, since);
  if (check.status === 'ahead') {
    throw new ValidationFailedError(where, [{ field: 'since', reason: `is past every sequence number issued so far (the latest is ${check.latest}): pass a seq you received` }]);
  }
}
