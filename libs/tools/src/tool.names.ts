import type { InteractionKind } from '@parley/contracts';

export const WORKSPACE_TOOLS = ['list_files', 'read_file', 'write_file', 'delete_file'] as const;
export type WorkspaceToolName = (typeof WORKSPACE_TOOLS)[number];

export const FINISH_TOOL = 'finish';
export type FinishToolName = typeof FINISH_TOOL;

export const HUMAN_TOOLS = ['ask_user_text', 'ask_user_choice', 'ask_user_confirm', 'edit_document', 'present_for_review'] as const;
export type HumanToolName = (typeof HUMAN_TOOLS)[number];

/** Tools that reach outside the workspace; off unless an agent lists them. */
export const OUTSIDE_TOOLS = ['shell', 'http_request'] as const;

/**
 * Tools that steer the run itself. `delegate` is listed in an agent's tools; `complete_stage` is
 * offered by the run to agents with stages and `needs_input` to sub-agents.
 */
export const CONTROL_TOOLS = ['complete_stage', 'delegate', 'needs_input'] as const;
export type ControlToolName = (typeof CONTROL_TOOLS)[number];

export const ALL_TOOL_NAMES = [...WORKSPACE_TOOLS, FINISH_TOOL, ...HUMAN_TOOLS, ...OUTSIDE_TOOLS, ...CONTROL_TOOLS] as const;
export type ToolName = (typeof ALL_TOOL_NAMES)[number];

/** The interaction kind each human tool opens. */
export const HUMAN_TOOL_KINDS = {
  ask_user_text: 'free_text',
  ask_user_choice: 'multiple_choice',
  ask_user_confirm: 'confirm',
  edit_document: 'edit_text',
  present_for_review: 'review',
} as const satisfies Record<HumanToolName, InteractionKind>;

export function isHumanTool(name: string): name is HumanToolName {
  return (HUMAN_TOOLS as readonly string[]).includes(name);
}

export function isWorkspaceTool(name: string): name is WorkspaceToolName {
  return (WORKSPACE_TOOLS as readonly string[]).includes(name);
}

export function isToolName(name: string): name is ToolName {
  return (ALL_TOOL_NAMES as readonly string[]).includes(name);
}
