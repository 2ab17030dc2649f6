import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCatalog } from './agent.catalog';
import { AgentDefinitionError, loadAgentDefinitions, parseAgentDefinition, validateAgentDefinition } from './agent.loader';

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

  it("names the schema's refusals, the rules broken by the fields that parse and a wrong name in one message", () => {
    const text = 'name: y\nmodel: { provider: scripted, turns: [] }\ntools: [teleport]\nstages: [{ name: a, transitions: [b] }]\n';
    expect(() => parseAgentDefinition('a/x.yaml', text)).toThrow(
      /^agent definition a\/x\.yaml: model\.turns: .*; tools\.0: unknown tool "teleport" .*; stages\.0\.transitions\.0: no stage is named "b"; name: "y" must match the file name "x"$/,
    );
  });

  it("reads each schedule's cron in its time zone as the scheduler would, naming the field and the parser's reason", () => {
    const schedule = (cron: string, timezone?: string, name = 'tick') => ({ name, cron, ...(timezone ? { timezone } : {}), tenant: 'acme', task: 't' });
    const agent = (schedules: unknown[]) => ({ name: 'ticker', model: { provider: 'scripted', turns: [{ text: 'hi' }] }, schedules });
    const issues = (schedules: unknown[]) => {
      const result = validateAgentDefinition(agent(schedules));
      return result.ok ? [] : result.issues;
    };

    expect(issues([schedule('0 9 * * *', 'Europe/Berln')])).toEqual([{ field: 'schedules.0.timezone', reason: expect.stringContaining('unknown time zone "Europe/Berln"') }]);
    expect(issues([schedule('0 0 9 * * * *')])).toEqual([{ field: 'schedules.0.cron', reason: expect.stringContaining('too many fields') }]);
    expect(issues([schedule('0 25 * * *')])).toEqual([{ field: 'schedules.0.cron', reason: expect.stringContaining('expected range 0-23') }]);
    expect(issues([schedule('*/5 9 * *')])).toEqual([{ field: 'schedules.0.cron', reason: expect.stringContaining('needs 5 or 6 fields') }]);
    expect(issues([schedule('0 0 31 4 *', 'Mars/Olympus')]).map((i) => i.field)).toEqual(['schedules.0.timezone', 'schedules.0.cron']);
    expect(issues([schedule('@daily'), schedule('@hourly', 'Europe/Berlin', 'hourly'), schedule('@weekdays', undefined, 'weekdays')])).toEqual([]);
    expect(issues([schedule('@midnight')])).toEqual([{ field: 'schedules.0.cron', reason: expect.stringContaining('cannot resolve alias') }]);
    expect(issues([schedule('@daily 5'), schedule(' @weekly', undefined, 'weekly')])).toEqual([
      { field: 'schedules.0.cron', reason: expect.stringContaining('stands alone') },
      { field: 'schedules.1.cron', reason: expect.stringContaining('without spaces') },
    ]);
    expect(issues([schedule('@DAILY')])).toEqual([{ field: 'schedules.0.cron', reason: expect.stringContaining('in lowercase') }]);

    const loaded = validateAgentDefinition(agent([schedule('0 9 * * 1-5', 'Europe/Berlin', 'daily'), schedule('*/5 * * * * *', undefined, 'often'), schedule('0 9 * * MON', 'UTC', 'weekly')]));
    expect(loaded.ok && loaded.definition.schedules.map((s) => s.timezone)).toEqual(['Europe/Berlin', 'UTC', 'UTC']);

    expect(() => parseAgentDefinition('agents/ticker.yaml', 'name: ticker\nmodel: { provider: scripted, turns: [{ text: hi }] }\nschedules: [{ name: s, cron: "0 25 * * *", tenant: acme, task: t }]\n')).toThrow(
      /agents\/ticker\.yaml: schedules\.0\.cron: Constraint error/,
    );
  });

  it('names PARLEY_AGENTS_DIR when the folder cannot be read', () => {
    const missing = join(tmpdir(), `no-agents-${process.pid}`);
    expect(() => loadAgentDefinitions(missing)).toThrow(`agent definition ${missing}: cannot read the agents folder (PARLEY_AGENTS_DIR): ENOENT`);
  });

  it('refuses two files of one agent, naming both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-'));
    const text = 'name: demo\nmodel: { provider: scripted, turns: [{ text: hi }] }\n';
    writeFileSync(join(dir, 'demo.yaml'), text);
    writeFileSync(join(dir, 'demo.yml'), text);
    expect(() => loadAgentDefinitions(dir)).toThrow(`agent definition ${join(dir, 'demo.yml')}: agent "demo" is defined by ${join(dir, 'demo.yaml')} too; keep one of the two files`);
  });

  it('offers an anthropic agent only when a key is configured', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-'));
    writeFileSync(join(dir, 'claude.yaml'), 'name: claude\nmodel: { provider: anthropic, name: m }\n');
    expect(AgentCatalog.fromDirectory(dir, { anthropicAvailable: false }).summaries()).toEqual([]);
    expect(AgentCatalog.fromDirectory(dir, { anthropicAvailable: true }).summaries()).toEqual([
      { name: 'claude', description: '', provider: 'anthropic', tools: [] },
    ]);

    // Configured all the same: its schedules are registered and listed by processes without the key.
    const withoutKey = AgentCatalog.fromDirectory(dir, { anthropicAvailable: false });
    expect(withoutKey.configured().map((a) => a.name)).toEqual(['claude']);
    expect(withoutKey.findConfigured('claude')?.name).toBe('claude');
    expect(withoutKey.whyMissing('claude')).toMatch(/ANTHROPIC_API_KEY is not set/);
    expect(withoutKey.whyMissing('nobody')).toBe('agent nobody is no longer configured');
  });
});
