import type { Actor, Answer, ApprovalDecision, Run } from './api/types';

export function actorName(actor: Actor | undefined): string {
  if (!actor) {
    return 'unknown';
  }
  if (actor.kind === 'deadline') {
    return 'the deadline';
  }
  if (actor.kind === 'system') {
    return 'the system';
  }
  return actor.subject ?? 'someone';
}

export const DECISION_LABELS: Record<ApprovalDecision, string> = {
  allow_once: 'allowed once',
  allow_stage: 'allowed for the stage',
  allow_run: 'allowed for the run',
  deny: 'denied',
};

export function describeAnswer(answer: Answer): string {
  switch (answer.kind) {
    case 'free_text':
      return answer.text === '' ? '(empty answer)' : answer.text;
    case 'multiple_choice':
      return answer.labels.join(', ');
    case 'confirm':
      return answer.confirmed ? 'Yes' : 'No';
    case 'edit_text':
      return 'edited the document';
    case 'review':
      return `${answer.approved ? 'Approved' : 'Changes requested'}${answer.feedback ? `: ${answer.feedback}` : ''}`;
    case 'tool_approval':
      return `${DECISION_LABELS[answer.decision]}${answer.edited ? ' (arguments edited)' : ''}${answer.reason ? `: ${answer.reason}` : ''}`;
  }
}

export function relativeTime(iso: string, now: number): string {
  const secs = Math.round((now - Date.parse(iso)) / 1000);
  if (Number.isNaN(secs)) {
    return iso;
  }
  if (secs < 5) {
    return 'just now';
  }
  if (secs < 60) {
    return `${secs}s ago`;
  }
  if (secs < 3600) {
    return `${Math.floor(secs / 60)}m ago`;
  }
  if (secs < 86_400) {
    return `${Math.floor(secs / 3600)}h ago`;
  }
  return new Date(iso).toLocaleString();
}

/** "4m 05s left", or "overdue" once the deadline has passed (the deadline job resolves it soon). */
export function countdown(deadline: string | null, now: number): string {
  if (deadline === null) {
    return 'no deadline';
  }
  const secs = Math.floor((Date.parse(deadline) - now) / 1000);
  if (secs <= 0) {
    return 'deadline passed';
  }
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  const pad = (n: number): string => String(n).padStart(2, '0');
  return h > 0 ? `${h}h ${pad(m)}m left` : `${m}m ${pad(s)}s left`;
}

export function isEnded(run: Pick<Run, 'status'>): boolean {
  return run.status === 'finished' || run.status === 'failed' || run.status === 'cancelled';
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** Tool results are JSON text; show them indented when they parse. */
export function prettyContent(content: string): string {
  try {
    return prettyJson(JSON.parse(content));
  } catch {
    return content;
  }
}
