/** What a workspace write/delete reports; `replayed` means the effect id was already applied. */
export type EffectOutcome =
  | { status: 'applied'; result: string }
  | { status: 'replayed'; result: string }
  | { status: 'rejected'; error: string };

export interface WorkspaceFile {
  path: string;
  bytes: number;
}

/**
 * A run's workspace, kept in Redis so any worker can resume the run. Writes and deletes carry the
 * tool call's effect id: applying the same effect id twice changes nothing and returns the first
 * result. They are fenced by the run lease held by the caller.
 */
export interface WorkspacePort {
  list(): Promise<WorkspaceFile[]>;
  read(path: string): Promise<string | null>;
  write(effectId: string, path: string, content: string): Promise<EffectOutcome>;
  delete(effectId: string, path: string): Promise<EffectOutcome>;
}
