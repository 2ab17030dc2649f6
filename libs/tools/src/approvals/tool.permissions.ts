import type { AgentDefinition, Permission } from '@parley/contracts';
import type { ToolName } from '../tool.names';

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

/** The agent's permission for a tool: its own setting, else allow for read-only tools and ask for tools with effects. */
export function permissionOf(agent: Pick<AgentDefinition, 'permissions'>, tool: string): Permission {
  return agent.permissions[tool] ?? (hasEffects(tool) ? 'ask' : 'allow');
}

/** The tools offered to the model: the agent's list without the denied ones. */
export function offeredTools(agent: Pick<AgentDefinition, 'tools' | 'permissions'>): string[] {
  return agent.tools.filter((tool) => permissionOf(agent, tool) !== 'deny');
}
