import type { AuditEntry, LogEntry, LogEntryOf } from '@parley/contracts';
import { argsDigest } from '@parley/tools';

/**
 * Reads who approved what from a run's log: every resolution of a tool approval (by a person, a
 * deadline or a stop), and every call that needed approval but ran on a grant or a safe command.
 * The log is written atomically with each decision, so the audit can never disagree with it.
 */
export function buildAudit(tenant: string, entries: readonly LogEntry[]): AuditEntry[] {
  const approvals = new Map<string, LogEntryOf<'question'>>();
  const audit: AuditEntry[] = [];
  for (const entry of entries) {
    if (entry.type === 'question' && entry.prompt.kind === 'tool_approval' && !approvals.has(entry.interactionId)) {
      approvals.set(entry.interactionId, entry);
    } else if (entry.type === 'answer') {
      const question = approvals.get(entry.interactionId);
      if (question) {
        audit.push(resolutionEntry(tenant, question, entry));
        approvals.delete(entry.interactionId);
      }
    } else if (entry.type === 'tool_result' && entry.approval) {
      const { basis, covered, argsDigest: digest, denied } = entry.approval;
      audit.push({
        at: entry.at,
        tool: entry.name,
        effectId: entry.effectId,
        basis,
        decision: denied ? 'deny' : 'allow',
        scope: null,
        approver: null,
        grants: covered,
        edited: false,
        argsDigest: digest,
      });
    }
  }
  return audit;
}

function resolutionEntry(tenant: string, question: LogEntryOf<'question'>, answer: LogEntryOf<'answer'>): AuditEntry {
  const prompt = question.prompt as Extract<LogEntryOf<'question'>['prompt'], { kind: 'tool_approval' }>;
  const base = { at: answer.at, tool: prompt.tool, effectId: question.effectId, interactionId: question.interactionId };
  const approver = { tenant, ...answer.by };
  const choice = answer.answer?.kind === 'tool_approval' ? answer.answer : undefined;
  if (answer.outcome !== 'answered' || !choice) {
    return {
      ...base,
      basis: answer.outcome === 'expired' ? 'deadline' : 'cancelled',
      decision: 'deny',
      scope: null,
      approver,
      grants: [],
      edited: false,
      argsDigest: argsDigest(prompt.input),
    };
  }
  return {
    ...base,
    basis: 'person',
    decision: choice.decision,
    scope: choice.decision === 'allow_run' ? 'run' : choice.decision === 'allow_stage' ? 'stage' : choice.decision === 'allow_once' ? 'once' : null,
    approver,
    grants: choice.grants,
    edited: choice.edited,
    ...(choice.reason ? { reason: choice.reason } : {}),
    argsDigest: choice.argsDigest,
  };
}
