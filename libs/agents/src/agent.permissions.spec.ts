import type { AgentDefinition } from '@parley/contracts';
import { DEFAULT_SAFE_COMMANDS } from '@parley/tools';
import { AgentCatalog } from './agent.catalog';
import { AgentDefinitionError, parseAgentDefinition } from './agent.loader';

const MODEL = 'model: { provider: scripted, turns: [{ text: hi }] }';

/** A definition of agent `a` in file `agents/a.yaml` with extra YAML lines. */
const parse = (...lines: string[]): AgentDefinition => parseAgentDefinition('agents/a.yaml', ['name: a', MODEL, ...lines, ''].join('\n'));

/** The message of the AgentDefinitionError a definition throws. */
const problemOf = (...lines: string[]): string => {
  try {
    parse(...lines);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentDefinitionError);
    return (error as Error).message;
  }
  throw new Error('expected the definition to be refused');
};

describe('parseAgentDefinition: tools and permissions', () => {
  it('rejects an unknown tool in tools, naming its index and the tool', () => {
    const message = problemOf('tools: [read_file, teleport]');
    expect(message).toContain('agents/a.yaml');
    expect(message).toMatch(/tools\.1: unknown tool "teleport"/);
    expect(message).toContain('known: ');
  });

  it('rejects an unknown tool in permissions, naming it', () => {
    expect(problemOf('permissions: { teleport: allow }')).toMatch(/permissions\.teleport: unknown tool/);
  });

  it('rejects a permission that is not allow, ask or deny', () => {
    expect(problemOf('permissions: { shell: maybe }')).toMatch(/permissions\.shell/);
  });

  it.each(['finish', 'ask_user_text', 'ask_user_choice', 'present_for_review'])('rejects ask for %s', (tool) => {
    const message = problemOf(`tools: [${tool}]`, `permissions: { ${tool}: ask }`);
    expect(message).toContain(`permissions.${tool}: "ask" is not available for ${tool}`);
  });

  it('accepts allow and deny for finish and the human tools', () => {
    const agent = parse('tools: [finish, ask_user_text]', 'permissions: { finish: allow, ask_user_text: deny }');
    expect(agent.permissions).toEqual({ finish: 'allow', ask_user_text: 'deny' });
  });

  it.each([
    ['bash', /runs other commands/],
    ['rm -rf /', /more than a program and one subcommand/],
    ['a/b', /bare program name/],
    ['npm exec', /runs other programs/],
    ['python3', /runs code/],
    ['ls;', /characters that are not allowed/],
  ])('rejects the safe command %j, naming the entry', (entry, why) => {
    const message = problemOf('tools: [shell]', `safe_commands: [cat, ${JSON.stringify(entry)}]`);
    expect(message).toContain(`safe_commands.1: safe command ${JSON.stringify(entry)}`);
    expect(message).toMatch(why);
    expect(message).not.toContain('safe_commands.0');
  });

  it('rejects http_request without any allowed host', () => {
    expect(problemOf('tools: [http_request]')).toMatch(/http\.allowed_hosts: http_request is enabled/);
    expect(problemOf('tools: [http_request]', 'http: { allowed_hosts: [] }')).toMatch(/http\.allowed_hosts/);
  });

  it('needs no allowed host when http_request is not a tool', () => {
    expect(parse('tools: [read_file]').http.allowed_hosts).toEqual([]);
  });

  it('reports every problem at once', () => {
    const message = problemOf('tools: [teleport, http_request]', 'permissions: { finish: ask }', 'safe_commands: [bash]');
    expect(message).toContain('tools.0');
    expect(message).toContain('permissions.finish');
    expect(message).toContain('safe_commands.0');
    expect(message).toContain('http.allowed_hosts');
  });

  it('rejects unknown keys in the shell and http settings', () => {
    expect(problemOf('shell: { timeout: 5 }')).toMatch(/shell\.timeout/);
    expect(problemOf('http: { allowed_hosts: [a.example], proxy: x }')).toMatch(/http\.proxy/);
  });

  it('accepts a full definition with permissions, safe commands, shell and http settings', () => {
    const agent = parse(
      'tools: [list_files, read_file, write_file, shell, http_request, finish]',
      'permissions: { shell: ask, write_file: allow, read_file: ask, http_request: deny }',
      'safe_commands: [cat, "git status", "npm  test"]',
      'shell: { max_output_bytes: 2048 }',
      'http: { allowed_hosts: [api.example.com, "*.example.org", "127.0.0.1:8080"] }',
    );
    expect(agent.tools).toEqual(['list_files', 'read_file', 'write_file', 'shell', 'http_request', 'finish']);
    expect(agent.permissions).toEqual({ shell: 'ask', write_file: 'allow', read_file: 'ask', http_request: 'deny' });
    expect(agent.safe_commands).toEqual(['cat', 'git status', 'npm  test']);
    expect(agent.shell).toEqual({ timeout_secs: 30, max_output_bytes: 2048 });
    expect(agent.http).toEqual({
      allowed_hosts: ['api.example.com', '*.example.org', '127.0.0.1:8080'],
      timeout_secs: 10,
      max_response_bytes: 256 * 1024,
    });
  });

  it('gives the documented defaults when nothing is set', () => {
    const agent = parse();
    expect(agent.tools).toEqual([]);
    expect(agent.permissions).toEqual({});
    expect(agent.safe_commands).toEqual([]);
    expect(agent.shell).toEqual({ timeout_secs: 30, max_output_bytes: 64 * 1024 });
    expect(agent.http).toEqual({ allowed_hosts: [], timeout_secs: 10, max_response_bytes: 256 * 1024 });
  });

  it('keeps explicit shell and http timeouts', () => {
    const agent = parse('tools: [http_request]', 'shell: { timeout_secs: 120 }', 'http: { allowed_hosts: [a.example], timeout_secs: 60 }');
    expect(agent.shell.timeout_secs).toBe(120);
    expect(agent.http.timeout_secs).toBe(60);
  });
});

// ---------------------------------------------------------------------------------------------

describe('AgentCatalog safe commands', () => {
  const definition = (name: string, safeCommands: string[]): AgentDefinition =>
    parseAgentDefinition(`agents/${name}.yaml`, [`name: ${name}`, MODEL, 'tools: [shell]', `safe_commands: ${JSON.stringify(safeCommands)}`, ''].join('\n'));

  const defaults = DEFAULT_SAFE_COMMANDS.map(({ entry, note }) => ({ entry, source: 'default', note }));

  it('lists the defaults, then the global entries, then the agent entries, each with its source', () => {
    const catalog = new AgentCatalog([definition('builder', ['npm test', 'make'])], {
      anthropicAvailable: false,
      globalSafeCommands: ['git status', 'jq'],
    });
    expect(catalog.safeCommands('builder')).toEqual([
      ...defaults,
      { entry: 'git status', source: 'global' },
      { entry: 'jq', source: 'global' },
      { entry: 'npm test', source: 'agent:builder' },
      { entry: 'make', source: 'agent:builder' },
    ]);
  });

  it('keeps the first source of a duplicate and writes entries in one canonical spelling', () => {
    const catalog = new AgentCatalog([definition('builder', ['cat', 'jq', 'git   status'])], {
      anthropicAvailable: false,
      globalSafeCommands: ['jq', ' git status '],
    });
    const safe = catalog.safeCommands('builder');
    expect(safe.filter((command) => command.entry === 'cat')).toEqual([{ entry: 'cat', source: 'default', note: expect.any(String) }]);
    expect(safe.filter((command) => command.entry === 'jq')).toEqual([{ entry: 'jq', source: 'global' }]);
    expect(safe.filter((command) => command.entry === 'git status')).toEqual([{ entry: 'git status', source: 'global' }]);
    expect(safe).toHaveLength(defaults.length + 2);
  });

  it("keeps each agent's entries to that agent", () => {
    const catalog = new AgentCatalog([definition('one', ['jq']), definition('two', ['make'])], { anthropicAvailable: false });
    expect(catalog.safeCommands('one').map((command) => command.entry)).toContain('jq');
    expect(catalog.safeCommands('one').map((command) => command.entry)).not.toContain('make');
    expect(catalog.safeCommands('two').map((command) => command.entry)).toContain('make');
    expect(catalog.safeCommands('two').map((command) => command.entry)).not.toContain('jq');
  });

  it('without a name gives the defaults and the global entries', () => {
    const catalog = new AgentCatalog([definition('builder', ['make'])], { anthropicAvailable: false, globalSafeCommands: ['jq'] });
    expect(catalog.safeCommands()).toEqual([...defaults, { entry: 'jq', source: 'global' }]);
  });

  it('without global entries gives only the defaults', () => {
    const catalog = new AgentCatalog([], { anthropicAvailable: false });
    expect(catalog.safeCommands()).toEqual(defaults);
  });

  it('throws on an invalid global entry, naming it and where it came from', () => {
    const build = () => new AgentCatalog([definition('builder', [])], { anthropicAvailable: false, globalSafeCommands: ['jq', 'bash'] });
    expect(build).toThrow(/global safe commands/);
    expect(build).toThrow(/"bash"/);
    expect(() => new AgentCatalog([], { anthropicAvailable: false, globalSafeCommands: ['rm -rf /'] })).toThrow(/"rm -rf \/"/);
  });

  it("throws on an invalid agent entry that did not come through the loader, naming the agent", () => {
    const valid = definition('builder', []);
    expect(() => new AgentCatalog([{ ...valid, safe_commands: ['sh'] }], { anthropicAvailable: false })).toThrow(/agent "builder".*"sh"/);
  });

  it('an agent that is not offered has no safe commands', () => {
    const claude = parseAgentDefinition('agents/claude.yaml', 'name: claude\nmodel: { provider: anthropic, name: m }\n');
    const catalog = new AgentCatalog([claude], { anthropicAvailable: false });
    expect(() => catalog.safeCommands('claude')).toThrow(/agent claude not found/);
    expect(() => catalog.safeCommands('nobody')).toThrow(/agent nobody not found/);
  });
});
