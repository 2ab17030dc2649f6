import type { Run } from '../api/types';

export function StatusBadge({ run }: { run: Pick<Run, 'status' | 'waitReason'> }) {
  return (
    <span class={`status status-${run.status}`} data-testid="run-status" data-status={run.status}>
      {run.status}
      {run.status === 'waiting' && run.waitReason ? <span class="wait-reason"> · {run.waitReason}</span> : null}
    </span>
  );
}
