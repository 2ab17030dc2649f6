/** The caller no longer holds the run: another worker took it over. Stop without writing. */
export class LeaseLostError extends Error {
  readonly code = 'lease_lost';
  constructor(readonly runId: string) {
    super(`lease on run ${runId} was lost to another worker`);
    this.name = 'LeaseLostError';
  }
}
