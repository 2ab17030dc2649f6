import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'yaml';
import { AgentDefinitionSchema, ParleyError, toIssues, type AgentDefinition, type ErrorIssue } from '@parley/contracts';
import { ALL_TOOL_NAMES, isApprovable, isToolName, parseSafeCommandEntry } from '@parley/tools';
import { scheduleTimingProblems } from './schedule.timing';

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
  const expected = basename(file).replace(/\.ya?ml$/, '');
  const checked = validateAgentDefinition(raw, (fields) =>
    fields.name !== undefined && fields.name !== expected ? [{ field: 'name', reason: `"${fields.name}" must match the file name "${expected}"` }] : [],
  );
  if (!checked.ok) {
    throw new AgentDefinitionError(file, describeIssues(checked.issues));
  }
  return checked.definition;
}

/** The top-level fields of a definition that pass the schema, each on its own. */
export type AgentFields = Partial<AgentDefinition>;

/**
 * The schema and every rule it cannot express, as for an agent file, plus the caller's own rules:
 * the definition, or each bad field. The rules run on the fields that parse even when others do
 * not, so that one try names every problem, not the schema's first and the rules' next time.
 */
export function validateAgentDefinition(
  raw: unknown,
  moreRules: (fields: AgentFields) => ErrorIssue[] = () => [],
): { ok: true; definition: AgentDefinition } | { ok: false; issues: ErrorIssue[] } {
  const parsed = AgentDefinitionSchema.safeParse(raw);
  const fields = parsed.success ? parsed.data : parseFieldByField(raw);
  const issues = [...(parsed.success ? [] : toIssues(parsed.error)), ...definitionProblems(fields), ...moreRules(fields)];
  return parsed.success && issues.length === 0 ? { ok: true, definition: parsed.data } : { ok: false, issues };
}

function parseFieldByField(raw: unknown): AgentFields {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return {};
  }
  const fields: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(AgentDefinitionSchema.shape)) {
    const parsed = schema.safeParse((raw as Record<string, unknown>)[key]);
    if (parsed.success) {
      fields[key] = parsed.data;
    }
  }
  return fields;
}

function describeIssues(issues: ErrorIssue[]): string {
  return issues.map((i) => `${i.field}: ${i.reason}`).join('; ');
}

/** Each rule looks only at fields that parsed: a rule across fields waits for all of them. */
function definitionProblems(agent: AgentFields): ErrorIssue[] {
  return [...toolProblems(agent), ...stageProblems(agent), ...scheduleProblems(agent)];
}

/** What the schema cannot see: tool names, permissions that make no sense, unreadable safe commands. */
function toolProblems({ tools, permissions, safe_commands, http, delegates }: AgentFields): ErrorIssue[] {
  const problems: ErrorIssue[] = [];
  const known = `known: ${ALL_TOOL_NAMES.join(', ')}`;
  tools?.forEach((tool, i) => {
    if (!isToolName(tool)) {
      problems.push({ field: `tools.${i}`, reason: `unknown tool "${tool}" (${known})` });
    } else if (tool === 'complete_stage' || tool === 'needs_input') {
      problems.push({ field: `tools.${i}`, reason: `${tool} is offered by the run itself (complete_stage to agents with stages, needs_input to sub-agents); do not list it` });
    }
  });
  for (const [tool, permission] of Object.entries(permissions ?? {})) {
    if (!isToolName(tool)) {
      problems.push({ field: `permissions.${tool}`, reason: `unknown tool (${known})` });
    } else if (permission === 'ask' && !isApprovable(tool)) {
      problems.push({ field: `permissions.${tool}`, reason: `"ask" is not available for ${tool} (use allow or deny)` });
    }
  }
  safe_commands?.forEach((entry, i) => {
    const parsed = parseSafeCommandEntry(entry);
    if (!parsed.ok) {
      problems.push({ field: `safe_commands.${i}`, reason: parsed.error });
    }
  });
  if (tools?.includes('http_request') && http?.allowed_hosts.length === 0) {
    problems.push({ field: 'http.allowed_hosts', reason: 'http_request is enabled, so list at least one host it may reach' });
  }
  if (delegates && delegates.length > 0 && tools && !tools.includes('delegate')) {
    problems.push({ field: 'delegates', reason: 'list "delegate" in tools to let this agent start sub-agents' });
  }
  return problems;
}

/** Stages must form a graph the run can walk: unique names, known transitions, points only where they fire. */
function stageProblems({ stages = [], tools }: AgentFields): ErrorIssue[] {
  const problems: ErrorIssue[] = [];
  const names = new Set<string>();
  stages.forEach((stage, i) => {
    const at = `stages.${i}`;
    if (names.has(stage.name)) {
      problems.push({ field: `${at}.name`, reason: `"${stage.name}" is used by another stage` });
    }
    names.add(stage.name);
    if (stage.points.length > 0 && stage.mode !== 'interactive_points') {
      problems.push({ field: `${at}.points`, reason: 'only a stage with mode interactive_points has interaction points' });
    }
    stage.required_tools.forEach((tool, j) => {
      if (tools && !tools.includes(tool)) {
        problems.push({ field: `${at}.required_tools.${j}`, reason: `"${tool}" is not in the agent's tools` });
      }
    });
    for (const [tool, permission] of Object.entries(stage.permissions)) {
      if (!isToolName(tool)) {
        problems.push({ field: `${at}.permissions.${tool}`, reason: 'unknown tool' });
      } else if (permission === 'ask' && !isApprovable(tool)) {
        problems.push({ field: `${at}.permissions.${tool}`, reason: `"ask" is not available for ${tool} (use allow or deny)` });
      }
    }
    const points = new Set<string>();
    stage.points.forEach((point, j) => {
      if (points.has(point.name)) {
        problems.push({ field: `${at}.points.${j}.name`, reason: `"${point.name}" is used by another point of this stage` });
      }
      points.add(point.name);
    });
  });
  stages.forEach((stage, i) => {
    stage.transitions.forEach((to, j) => {
      if (!names.has(to)) {
        problems.push({ field: `stages.${i}.transitions.${j}`, reason: `no stage is named "${to}"` });
      }
    });
  });
  return problems;
}

function scheduleProblems({ schedules = [] }: AgentFields): ErrorIssue[] {
  const problems: ErrorIssue[] = [];
  const names = new Set<string>();
  schedules.forEach((schedule, i) => {
    if (names.has(schedule.name)) {
      problems.push({ field: `schedules.${i}.name`, reason: `"${schedule.name}" is used by another schedule` });
    }
    names.add(schedule.name);
    problems.push(...scheduleTimingProblems(schedule, `schedules.${i}`));
  });
  return problems;
}

/**
 * Loads every `*.yaml` / `*.yml` in a folder; one bad file stops the load with its name and field,
 * and so do two files of one agent (`demo.yaml` and `demo.yml`), of which one would hide the other.
 */
export function loadAgentDefinitions(dir: string): AgentDefinition[] {
  const files = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    throw new AgentDefinitionError(dir, `cannot read the agents folder (PARLEY_AGENTS_DIR): ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return names
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => {
      const path = join(dir, name);
      const definition = parseAgentDefinition(path, readFileSync(path, 'utf8'));
      const other = files.get(definition.name);
      if (other !== undefined) {
        throw new AgentDefinitionError(path, `agent "${definition.name}" is defined by ${other} too; keep one of the two files`);
      }
      files.set(definition.name, path);
      return definition;
    });
}
