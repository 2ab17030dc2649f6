import type { PublishedMessage } from '@parley/contracts';

/**
 * Every message starts like this (includes/emit.lua: an array of one tenant's events, or one event
 * from an older release): the tenant is found without parsing the rest.
 */
const TENANT_OF = /^\[?\{"seq":\d+,"tenant":"([^"\\]+)"/;

/** The tenant of a message of the event channel (undefined if it is not an event). */
export function tenantOfMessage(message: string): string | undefined {
  const quick = TENANT_OF.exec(message)?.[1];
  if (quick !== undefined) {
    return quick;
  }
  try {
    const parsed = JSON.parse(message) as PublishedMessage;
    const tenant = (Array.isArray(parsed) ? parsed[0] : parsed)?.tenant;
    return typeof tenant === 'string' ? tenant : undefined;
  } catch {
    return undefined;
  }
}
