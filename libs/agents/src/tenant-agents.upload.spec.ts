import { ConflictError, ValidationFailedError, type AgentDefinition } from '@parley/contracts';
import { AgentCatalog } from './agent.catalog';
import { parseAgentDefinition } from './agent.loader';
import { parseUploadedAgent } from './tenant-agents.upload';

const global = (name: string, provider = 'scripted'): AgentDefinition =>
  parseAgentDefinition(`agents/${name}.yaml`, provider === 'scripted' ? `name: ${name}\nmodel: { provider: scripted, turns: [{ text: hi }] }\n` : `name: ${name}\nmodel: { provider: anthropic, name: m }\n`);
const catalog = new AgentCatalog([global('demo'), global('claude', 'anthropic')], { anthropicAvailable: false });
const MODEL = { provider: 'scripted', turns: [{ text: 'hi' }] };

function issuesOf(run: () => unknown): Array<{ field: string; reason: string }> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationFailedError);
    return (error as ValidationFailedError).issues;
  }
  throw new Error('expected the upload to be refused');
}

describe('parseUploadedAgent', () => {
  it('gives the same version for the same definition as JSON or YAML, defaults or not', () => {
    const json = parseUploadedAgent('mine', { definition: { name: 'mine', model: MODEL } }, catalog);
    const yaml = parseUploadedAgent('mine', { yaml: 'name: mine\nmodel: { provider: scripted, turns: [{ text: hi }] }\nlimits: { max_iterations: 25 }\n' }, catalog);
    expect(yaml.digest).toBe(json.digest);
    expect(json.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(json.sizeBytes).toBe(Buffer.byteLength(json.canonical));
    expect(parseUploadedAgent('mine', { definition: { name: 'mine', model: MODEL, description: 'x' } }, catalog).digest).not.toBe(json.digest);
  });

  it('names every bad field under definition., as the file loader checks them', () => {
    const issues = issuesOf(() => parseUploadedAgent('mine', { definition: { name: 'mine', model: MODEL, tools: ['teleport'], permissions: { finish: 'ask' }, safe_commands: ['bash'] } }, catalog));
    expect(issues.map((i) => i.field)).toEqual(['definition.tools.0', 'definition.permissions.finish', 'definition.safe_commands.0']);
    expect(issuesOf(() => parseUploadedAgent('mine', { definition: { name: 'mine', model: MODEL, surprise: 1 } }, catalog))[0].field).toBe('definition.surprise');
  });

  it('names the fields the schema refuses and the rules the others break, in one answer', () => {
    const issues = issuesOf(() =>
      parseUploadedAgent('mine', { definition: { name: 'other', model: MODEL, tools: ['teleport'], limits: { max_iterations: 'many' }, delegates: ['nobody'], schedules: 3 } }, catalog),
    );
    expect(issues.map((i) => i.field)).toEqual([
      'definition.limits.max_iterations',
      'definition.schedules',
      'definition.tools.0',
      'definition.delegates',
      'definition.name',
      'definition.delegates.0',
    ]);
  });

  it('wants exactly one of definition or yaml, and YAML that parses to a mapping', () => {
    expect(issuesOf(() => parseUploadedAgent('mine', {}, catalog))[0].field).toBe('(root)');
    expect(issuesOf(() => parseUploadedAgent('mine', { definition: {}, yaml: 'x: 1' }, catalog))[0].field).toBe('(root)');
    expect(issuesOf(() => parseUploadedAgent('mine', { yaml: 'name: [x' }, catalog))[0]).toMatchObject({ field: 'yaml', reason: expect.stringMatching(/not valid YAML/) });
    expect(issuesOf(() => parseUploadedAgent('mine', { yaml: '- a\n- b\n' }, catalog))[0].field).toBe('yaml');
    // Nested past what the parser's recursion takes: refused before it runs, not with its stack overflow.
    const deep = `name: mine\nx: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    const refused = [{ field: 'yaml', reason: 'nests mappings and sequences more than 32 levels deep' }];
    expect(issuesOf(() => parseUploadedAgent('mine', { yaml: deep }, catalog))).toEqual(refused);
    // Block sequences nest two bytes a level: 30,000 levels overflowed the parser, then exhausted the heap.
    expect(issuesOf(() => parseUploadedAgent('mine', { yaml: `name: mine\nx:\n  ${'- '.repeat(30_000)}y\n` }, catalog))).toEqual(refused);
    expect(issuesOf(() => parseUploadedAgent('mine', { yaml: `name: mine\nx:\n  ${'- '.repeat(32)}y\n` }, catalog))).toEqual(refused);
    expect(issuesOf(() => parseUploadedAgent('mine', { yaml: `name: mine\nx:\n  ${'- '.repeat(30)}y\n` }, catalog)).map((issue) => issue.field)).toEqual(['definition.model', 'definition.x']);
    // Brackets in quotes and comments are text, not nesting.
    const quoted = `name: mine\nmodel: { provider: scripted, turns: [{ text: "${'['.repeat(40)}" }] }\n# ${'{'.repeat(40)}\n`;
    expect(parseUploadedAgent('mine', { yaml: quoted }, catalog).definition.model).toEqual({ provider: 'scripted', turns: [{ text: '['.repeat(40), tool_calls: [] }] });
  });

  it('wants the name in the path', () => {
    expect(issuesOf(() => parseUploadedAgent('other', { definition: { name: 'mine', model: MODEL } }, catalog))[0]).toMatchObject({ field: 'definition.name' });
  });

  it("refuses a global agent's name with a conflict naming the field, offered or not", () => {
    for (const name of ['demo', 'claude']) {
      const upload = () => parseUploadedAgent(name, { definition: { name, model: MODEL } }, catalog);
      expect(upload).toThrow(ConflictError);
      try {
        upload();
      } catch (error) {
        expect((error as ConflictError).details).toEqual({ issues: [{ field: 'definition.name', reason: expect.stringContaining('global agent') }] });
      }
    }
  });

  it('refuses schedules, delegates that are not global agents, and anthropic without a key', () => {
    const issues = issuesOf(() =>
      parseUploadedAgent(
        'mine',
        {
          definition: {
            name: 'mine',
            model: { provider: 'anthropic', name: 'm' },
            tools: ['delegate'],
            delegates: ['demo', 'mine', 'claude'],
            schedules: [{ name: 's', cron: '* * * * *', tenant: 'other', task: 't' }],
          },
        },
        catalog,
      ),
    );
    expect(issues.map((i) => i.field)).toEqual(['definition.model.provider', 'definition.schedules', 'definition.delegates.1', 'definition.delegates.2']);
  });

  it('bounds the size', () => {
    const big = { name: 'mine', model: MODEL, system_prompt: 'x'.repeat(70 * 1024) };
    expect(issuesOf(() => parseUploadedAgent('mine', { definition: big }, catalog))[0]).toMatchObject({ field: 'definition', reason: expect.stringMatching(/at most 65536/) });
    const fits = { name: 'mine', model: MODEL, system_prompt: 'x'.repeat(64 * 1024 - 200) };
    expect(issuesOf(() => parseUploadedAgent('mine', { definition: fits }, catalog))[0]).toMatchObject({ field: 'definition', reason: expect.stringMatching(/with its defaults filled in/) });
  });
});
