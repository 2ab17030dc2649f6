import { AgentDefinitionSchema, type AgentDefinition } from '@parley/contracts';
import { permissionOf } from '@parley/tools';
import { NEEDS_ENABLEMENT, gatedPowers, withInertPowers } from './agent.powers';

const agent = (extra: Record<string, unknown> = {}): AgentDefinition =>
  AgentDefinitionSchema.parse({ name: 'a', model: { provider: 'scripted', turns: [{ text: 'hi' }] }, ...extra });

describe('gatedPowers', () => {
  it('lists nothing for an agent that only asks, denies or reads within its workspace', () => {
    expect(gatedPowers(agent({ tools: ['read_file', 'write_file', 'delete_file'], permissions: { read_file: 'allow', write_file: 'ask', delete_file: 'deny', finish: 'allow' } }))).toEqual([]);
  });

  it('lists shell and http_request even when every call would ask: the approver is the tenant, the host is not theirs', () => {
    expect(gatedPowers(agent({ tools: ['shell', 'read_file', 'http_request'], permissions: { shell: 'ask', http_request: 'deny' } }))).toEqual([
      { field: 'tools.0', kind: 'tool', value: 'shell', reason: NEEDS_ENABLEMENT },
      { field: 'tools.2', kind: 'tool', value: 'http_request', reason: NEEDS_ENABLEMENT },
    ]);
  });

  it('lists each safe command, each allow on a tool with effects (agent and stage) and an unattended allow, naming the field', () => {
    const powers = gatedPowers(
      agent({
        tools: ['write_file', 'delete_file', 'shell', 'http_request', 'read_file'],
        http: { allowed_hosts: ['a.example'] },
        permissions: { write_file: 'allow', read_file: 'allow', http_request: 'allow' },
        safe_commands: ['make', 'git status'],
        stages: [{ name: 'one', transitions: ['two'] }, { name: 'two', permissions: { delete_file: 'allow', shell: 'allow', list_files: 'allow', write_file: 'ask' } }],
        unattended_approval: 'allow',
      }),
    );
    expect(powers).toEqual([
      { field: 'tools.2', kind: 'tool', value: 'shell', reason: NEEDS_ENABLEMENT },
      { field: 'tools.3', kind: 'tool', value: 'http_request', reason: NEEDS_ENABLEMENT },
      { field: 'http.allowed_hosts.0', kind: 'allowed_host', value: 'a.example', reason: NEEDS_ENABLEMENT },
      { field: 'safe_commands.0', kind: 'safe_command', value: 'make', reason: NEEDS_ENABLEMENT },
      { field: 'safe_commands.1', kind: 'safe_command', value: 'git status', reason: NEEDS_ENABLEMENT },
      { field: 'permissions.write_file', kind: 'allow', value: 'write_file', reason: NEEDS_ENABLEMENT },
      { field: 'permissions.http_request', kind: 'allow', value: 'http_request', reason: NEEDS_ENABLEMENT },
      { field: 'stages.1.permissions.delete_file', kind: 'allow', value: 'delete_file', reason: NEEDS_ENABLEMENT },
      { field: 'stages.1.permissions.shell', kind: 'allow', value: 'shell', reason: NEEDS_ENABLEMENT },
      { field: 'unattended_approval', kind: 'unattended_approval', value: 'allow', reason: NEEDS_ENABLEMENT },
    ]);
    expect(NEEDS_ENABLEMENT).toBe('needs operator enablement');
  });
});

describe('withInertPowers', () => {
  const wide = agent({
    tools: ['write_file', 'read_file', 'shell', 'delete_file', 'http_request'],
    http: { allowed_hosts: ['169.254.169.254', 'redis:6379'] },
    permissions: { write_file: 'allow', read_file: 'allow', shell: 'deny', finish: 'allow' },
    safe_commands: ['make'],
    stages: [{ name: 'one', permissions: { delete_file: 'allow', write_file: 'deny', list_files: 'allow' } }],
    unattended_approval: 'allow',
  });
  const inert = withInertPowers(wide);

  it('turns allow on a tool with effects into ask, agent-wide and in stages', () => {
    expect(permissionOf(inert, 'write_file')).toBe('ask');
    expect(permissionOf(inert, 'delete_file', inert.stages[0])).toBe('ask');
  });

  it('keeps deny, ask, and allow on read-only and human tools', () => {
    expect(permissionOf(inert, 'shell')).toBe('deny');
    expect(permissionOf(inert, 'write_file', inert.stages[0])).toBe('deny');
    expect(permissionOf(inert, 'read_file')).toBe('allow');
    expect(permissionOf(inert, 'list_files', inert.stages[0])).toBe('allow');
    expect(inert.permissions.finish).toBe('allow');
  });

  it('takes away shell, http_request and every host', () => {
    expect(inert.tools).toEqual(['write_file', 'read_file', 'delete_file']);
    expect(inert.http.allowed_hosts).toEqual([]);
  });

  it('drops its own safe commands and denies asked-for calls in unattended runs', () => {
    expect(inert.safe_commands).toEqual([]);
    expect(inert.unattended_approval).toBe('deny');
  });

  it('leaves the rest of the definition and the original alone', () => {
    expect({
      ...inert,
      tools: wide.tools,
      http: wide.http,
      permissions: wide.permissions,
      stages: wide.stages,
      safe_commands: wide.safe_commands,
      unattended_approval: wide.unattended_approval,
    }).toEqual(wide);
    expect(wide.permissions.write_file).toBe('allow');
    expect(wide.safe_commands).toEqual(['make']);
    expect(gatedPowers(inert)).toEqual([]);
  });
});
