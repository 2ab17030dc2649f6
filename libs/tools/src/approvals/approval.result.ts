import type { Answer, Outcome } from '@parley/contracts';
import { errorResult, type ToolResult } from '../tool-result';

type ApprovalAnswer = Extract<Answer, { kind: 'tool_approval' }>;

/** The call may run: with these arguments. */
export type ApprovalVerdict = { allowed: true; input: Record<string, unknown>; edited: boolean } | { allowed: false; result: ToolResult };

/**
 * What an approval's resolution means for the call. Silence is never consent: a deadline or a stop
 * denies it like a person would, and the model is told which.
 */
export function approvalVerdict(outcome: Outcome, answer: Answer | undefined): ApprovalVerdict {
  switch (outcome) {
    case 'expired':
      return denied('denied: nobody approved this call before its deadline. Do not retry it unchanged; continue without it or call finish');
    case 'cancelled':
      return denied('denied: the run was stopped before this call was approved');
    case 'answered': {
      const approval = answer as ApprovalAnswer | undefined;
      if (approval?.kind !== 'tool_approval' || (approval.decision !== 'deny' && approval.input === undefined)) {
        return denied('denied: the approval could not be read');
      }
      if (approval.decision === 'deny') {
        const why = approval.reason ? `: ${approval.reason}` : '';
        return denied(`denied by the approver${why}. Do not retry this call unchanged`);
      }
      return { allowed: true, input: approval.input ?? {}, edited: approval.edited };
    }
  }
}

function denied(message: string): ApprovalVerdict {
  return { allowed: false, result: errorResult(message) };
}

/** The result of a call the approver changed: the model learns that, and sees the arguments that ran. */
export function withApproverEdits(result: ToolResult, input: Record<string, unknown>): ToolResult {
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(result.content);
    body = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { result: parsed };
  } catch {
    body = { result: result.content };
  }
  const note = { note: 'the approver changed the arguments of this call before approving it; it ran with these arguments', arguments: input };
  return { content: JSON.stringify({ ...body, approver_edited: note }), isError: result.isError };
}
