import type { AgentDefinition, Permission, Stage } from '@parley/contracts';
import { isHumanTool, type ToolName } from '../tool.names';

/** Tools that change something (the workspace, or anything outside it); everything else only reads or talks to the person. */
const TOOLS_WITH_EFFECTS: ReadonlySet<string> = new Set<ToolName>(['write_file', 'delete_file', 'shell', 'http_request']);

/** Tools a person could be asked to approve; the human tools and finish are allowed or denied, never asked about. */
const APPROVABLE_TOOLS: ReadonlySet<string> = new Set<ToolName>(['list_files', 'read_file', 'write_file', 'delete_file', 'shell', 'http_request']);

export function hasEffects(tool: string): boolean {
  return TOOLS_WITH_EFFECTS.has(tool);
}

export function isApprovable(tool: string): boolean {
  return APPROVABLE_TOOLS.has(tool);
}

/**
 * The permission for a tool: the current stage's setting, else the agent's, else allow for
 * read-only tools and ask for tools with effects.
 */
export function permissionOf(agent: Pick<AgentDefinition, 'permissions'>, tool: string, stage?: Pick<Stage, 'permissions'>): Permission {
  return stage?.permissions[tool] ?? agent.permissions[tool] ?? (hasEffects(tool) ? 'ask' : 'allow');
}

/** Where a run stands, as far as the tools it is offered go. */
export interface OfferContext {
  stage?: Stage;
  /** Nobody watches: the human tools are withheld, except those the stage requires. */
  unattended?: boolean;
  /** A sub-agent: it reports missing information with needs_input instead of asking. */
  child?: boolean;
}

/** The tools offered to the model: the agent's list without the denied ones, shaped by where the run stands. */
export function offeredTools(agent: Pick<AgentDefinition, 'tools' | 'permissions'>, context: OfferContext = {}): string[] {
  const { stage, unattended = false, child = false } = context;
  const movesOn = stage !== undefined && stage.transitions.length > 0;
  const offered = agent.tools.filter(
    (tool) =>
      permissionOf(agent, tool, stage) !== 'deny' &&
      !(unattended && isHumanTool(tool) && !stage?.required_tools.includes(tool)) &&
      // A stage with a way on ends with complete_stage; only the last stage may finish the run.
      !(movesOn && tool === 'finish'),
  );
  if (movesOn) {
    offered.push('complete_stage');
  }
  if (child) {
    offered.push('needs_input');
  }
  return [...new Set(offered)];
}
