import type { AgentDefinition, GatedPower, Permission } from '@parley/contracts';
import { hasEffects } from '@parley/tools';

export const NEEDS_ENABLEMENT = 'needs operator enablement';

/**
 * Tools that reach past the run's workspace: a command on the worker's host, a request on its
 * network. A tenant's own approver cannot vouch for those (the host and network are the
 * deployment's, not the tenant's), so an uploaded agent has them only once an operator enables it.
 */
export const OPERATOR_GATED_TOOLS: readonly string[] = ['shell', 'http_request'];

/**
 * What an uploaded agent grants itself beyond asking a person: tools that reach past its workspace
 * and the hosts it may call, its safe commands, `allow` on a tool with effects (agent-wide or in a
 * stage), and an unattended policy that runs asked-for calls unseen. These stay inert until an
 * operator enables the agent's version; `deny` and `ask` always apply.
 */
export function gatedPowers(agent: AgentDefinition): GatedPower[] {
  const powers: GatedPower[] = [];
  agent.tools.forEach((tool, i) => {
    if (OPERATOR_GATED_TOOLS.includes(tool)) {
      powers.push({ field: `tools.${i}`, kind: 'tool', value: tool, reason: NEEDS_ENABLEMENT });
    }
  });
  agent.http.allowed_hosts.forEach((host, i) => powers.push({ field: `http.allowed_hosts.${i}`, kind: 'allowed_host', value: host, reason: NEEDS_ENABLEMENT }));
  agent.safe_commands.forEach((entry, i) => powers.push({ field: `safe_commands.${i}`, kind: 'safe_command', value: entry, reason: NEEDS_ENABLEMENT }));
  const allows = (permissions: Record<string, Permission>, at: string): GatedPower[] =>
    Object.entries(permissions)
      .filter(([tool, permission]) => permission === 'allow' && hasEffects(tool))
      .map(([tool]) => ({ field: `${at}.${tool}`, kind: 'allow', value: tool, reason: NEEDS_ENABLEMENT }));
  powers.push(...allows(agent.permissions, 'permissions'));
  agent.stages.forEach((stage, i) => powers.push(...allows(stage.permissions, `stages.${i}.permissions`)));
  if (agent.unattended_approval === 'allow') {
    powers.push({ field: 'unattended_approval', kind: 'unattended_approval', value: 'allow', reason: NEEDS_ENABLEMENT });
  }
  return powers;
}

/**
 * The definition as it runs while its powers are inert: no shell or http_request (a call gets the
 * unknown-tool result), no hosts, no own safe commands, `allow` on tools with effects asks,
 * unattended asks are denied.
 */
export function withInertPowers(agent: AgentDefinition): AgentDefinition {
  const tame = (permissions: Record<string, Permission>): Record<string, Permission> =>
    Object.fromEntries(Object.entries(permissions).map(([tool, permission]) => [tool, permission === 'allow' && hasEffects(tool) ? 'ask' : permission]));
  return {
    ...agent,
    tools: agent.tools.filter((tool) => !OPERATOR_GATED_TOOLS.includes(tool)),
    http: { ...agent.http, allowed_hosts: [] },
    safe_commands: [],
    permissions: tame(agent.permissions),
    stages: agent.stages.map((stage) => ({ ...stage, permissions: tame(stage.permissions) })),
    unattended_approval: 'deny',
  };
}
