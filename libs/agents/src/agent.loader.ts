import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'yaml';
import { AgentDefinitionSchema, ParleyError, toIssues, type AgentDefinition } from '@parley/contracts';

/** An agent file that cannot be used; names the file and every bad field. */
export class AgentDefinitionError extends ParleyError {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super('validation_failed', `agent definition ${file}: ${reason}`, { file });
  }
}

export function parseAgentDefinition(file: string, text: string): AgentDefinition {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    throw new AgentDefinitionError(file, `not valid YAML: ${(error as Error).message}`);
  }
  const parsed = AgentDefinitionSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AgentDefinitionError(file, toIssues(parsed.error).map((i) => `${i.field}: ${i.reason}`).join('; '));
  }
  const expected = basename(file).replace(/\.ya?ml$/, '');
  if (parsed.data.name !== expected) {
    throw new AgentDefinitionError(file, `name: "${parsed.data.name}" must match the file name "${expected}"`);
  }
  return parsed.data;
}

/** Loads every `*.yaml` / `*.yml` in a folder; one bad file stops the load with its name and field. */
export function loadAgentDefinitions(dir: string): AgentDefinition[] {
  return readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => {
      const path = join(dir, name);
      return parseAgentDefinition(path, readFileSync(path, 'utf8'));
    });
}
