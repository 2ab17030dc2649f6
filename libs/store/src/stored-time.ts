/**
 * Times in run and interaction hashes are epoch ms: 13 bytes where an ISO string takes 24, which
 * keeps a parked run's hashes in a smaller allocation. Hashes written before that hold ISO strings;
 * both read back.
 */
export function isoOf(stored: string): string {
  return /^\d+$/.test(stored) ? new Date(Number(stored)).toISOString() : stored;
}

export function msOf(stored: string): number {
  return /^\d+$/.test(stored) ? Number(stored) : Date.parse(stored);
}
