import type { ApprovalPrompt } from '@parley/contracts';
import type { CallScope } from './call.scope';

/** The tool_approval prompt a person sees: the call, its telling argument, and what each scoped choice would grant. */
export function approvalPrompt(tool: string, input: Record<string, unknown>, scope: CallScope, stage: string): ApprovalPrompt {
  return { kind: 'tool_approval', prompt: scope.summary, tool, input, telling: scope.telling, stage, grant: scope.offer };
}
