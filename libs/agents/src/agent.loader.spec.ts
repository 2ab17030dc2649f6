import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCatalog } from './agent.catalog';
import { AgentDefinitionError, loadAgentDefinitions, parseAgentDefinition } from './agent.loader';

describe('agent definitions', () => {
  it('loads the bundled agents with their defaults', () => {
    const agents = loadAgentDefinitions(join(__dirname, '..', '..', '..', 'agents'));
    expect(agents.map((a) => a.name)).toEqual(['assistant', 'demo']);
    const demo = agents.find((a) => a.name === 'demo');
    expect(demo?.limits).toEqual({ max_iterations: 10, max_ask_user_per_loop: 3, interaction_timeout_secs: 3600 });
  });

  it('applies the documented limit defaults', () => {
    const agent = parseAgentDefinition('x/mini.yaml', 'name: mini\nmodel: { provider: scripted, turns: [{ text: hi }] }\n');
    expect(agent.limits).toEqual({ max_iterations: 25, max_ask_user_per_loop: 3, interaction_timeout_secs: 3600 });
  });

  it('names the file and the field of a bad definition', () => {
    const bad = () => parseAgentDefinition('agents/bad.yaml', 'name: bad\nmodel: { provider: scripted, turns: [] }\nlimits: { max_iterations: 0 }\n');
    expect(bad).toThrow(AgentDefinitionError);
    expect(bad).toThrow(/agents\/bad\.yaml.*model\.turns.*limits\.max_iterations/);
    expect(() => parseAgentDefinition('a/x.yaml', 'name: y\nmodel: { provider: scripted, turns: [{}] }\n')).toThrow(/name: "y" must match/);
    expect(() => parseAgentDefinition('a/x.yaml', 'name: x\nmodel: {provider: scripted, turns: [{}]}\nsurprise: 1\n')).toThrow(/surprise/);
    expect(() => parseAgentDefinition('a/x.yaml', 'name: [x')).toThrow(/not valid YAML/);
  });

  it('offers an anthropic agent only when a key is configured', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-'));
    writeFileSync(join(dir, 'claude.yaml'), 'name: claude\nmodel: { provider: anthropic, name: m }\n');
    expect(AgentCatalog.fromDirectory(dir, { anthropicAvailable: false }).summaries()).toEqual([]);
    expect(AgentCatalog.fromDirectory(dir, { anthropicAvailable: true }).summaries()).toEqual([
      { name: 'claude', description: '', provider: 'anthropic', tools: [] },
    ]);
  });
});
