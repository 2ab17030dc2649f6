import type { ParleyEvent } from '@parley/contracts';

/** A stream entry as Redis returns it: its id and its flat field/value list. */
export type StreamEntry = [id: string, fields: string[] | null];

/**
 * The event a tenant stream entry holds. `emit` stores an event as the fields r (run id), o (owner),
 * a (time, epoch ms), t (type) and d (data JSON); its seq is the entry id (`0-<seq>`) and its tenant
 * the stream's. Undefined for an entry that is not one (nothing written by Parley).
 */
export function eventFromEntry(tenant: string, [id, fields]: StreamEntry): ParleyEvent | undefined {
  const value: Record<string, string> = {};
  for (let i = 0; fields && i + 1 < fields.length; i += 2) {
    value[fields[i]] = fields[i + 1];
  }
  const seq = Number(id.slice(id.indexOf('-') + 1));
  const at = Number(value.a);
  if (!value.r || !value.t || value.d === undefined || !Number.isSafeInteger(seq) || !Number.isFinite(at)) {
    return undefined;
  }
  try {
    const data = JSON.parse(value.d) as unknown;
    return { seq, tenant, runId: value.r, owner: value.o ?? '', at: new Date(at).toISOString(), type: value.t, data } as ParleyEvent;
  } catch {
    return undefined;
  }
}
