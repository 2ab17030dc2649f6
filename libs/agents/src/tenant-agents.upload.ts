import { Parser, parse } from 'yaml';
import {
  AGENT_DEFINITION_MAX_BYTES,
  LIMITS,
  ConflictError,
  ValidationFailedError,
  type AgentDefinition,
  type ErrorIssue,
  type UploadAgentBody,
} from '@parley/contracts';
import type { AgentCatalog } from './agent.catalog';
import { digestDefinition } from './agent.digest';
import { validateAgentDefinition, type AgentFields } from './agent.loader';

/** An uploaded definition that passed every check, with its version's identity. */
export interface UploadedAgent {
  definition: AgentDefinition;
  canonical: string;
  digest: string;
  sizeBytes: number;
}

/** Field paths of the definition are reported under `definition.`, whether it came as JSON or YAML. */
const FIELD = 'definition';

/**
 * Checks an upload for agent `name` as the loader checks an agent file, plus what only a tenant
 * agent must respect: the name of no global agent (409), no schedules, delegates that are global
 * agents, a provider this deployment runs, and the size bound. Throws naming every bad field.
 */
export function parseUploadedAgent(name: string, body: UploadAgentBody, catalog: AgentCatalog): UploadedAgent {
  if (catalog.isReserved(name)) {
    const reason = `"${name}" is the name of a global agent; choose another`;
    throw new ConflictError(`agent name ${reason}`, { issues: [{ field: at('name'), reason }] });
  }
  const checked = validateAgentDefinition(rawDefinition(body), (fields) => [
    ...(fields.name !== undefined && fields.name !== name ? [{ field: 'name', reason: `"${fields.name}" must match the name in the path "${name}"` }] : []),
    ...tenantProblems(fields, catalog),
  ]);
  if (!checked.ok) {
    throw new ValidationFailedError('agent definition', checked.issues.map((issue) => ({ field: at(issue.field), reason: issue.reason })));
  }
  const definition = checked.definition;
  const version = digestDefinition(definition);
  if (version.sizeBytes > AGENT_DEFINITION_MAX_BYTES) {
    throw new ValidationFailedError('agent definition', [
      { field: FIELD, reason: `is ${version.sizeBytes} bytes with its defaults filled in; at most ${AGENT_DEFINITION_MAX_BYTES}` },
    ]);
  }
  return { definition, ...version };
}

function rawDefinition(body: UploadAgentBody): unknown {
  if ((body.definition === undefined) === (body.yaml === undefined)) {
    throw new ValidationFailedError('body', [{ field: '(root)', reason: 'give exactly one of definition (an object) or yaml (its text)' }]);
  }
  if (body.definition !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(body.definition));
    if (bytes > AGENT_DEFINITION_MAX_BYTES) {
      throw new ValidationFailedError('body', [{ field: FIELD, reason: `is ${bytes} bytes as JSON; at most ${AGENT_DEFINITION_MAX_BYTES}` }]);
    }
    return body.definition;
  }
  const yaml = body.yaml ?? '';
  if (nestingDepth(yaml) > LIMITS.nestingDepth) {
    throw new ValidationFailedError('body', [{ field: 'yaml', reason: `nests mappings and sequences more than ${LIMITS.nestingDepth} levels deep` }]);
  }
  let raw: unknown;
  try {
    raw = parse(yaml);
    // An alias inside its own anchor parses to a cycle, which JSON (and every later step) cannot hold.
    JSON.stringify(raw);
  } catch (error) {
    throw new ValidationFailedError('body', [{ field: 'yaml', reason: `not valid YAML: ${(error as Error).message}` }]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ValidationFailedError('body', [{ field: 'yaml', reason: 'must be a YAML mapping (the agent definition)' }]);
  }
  return raw;
}

/**
 * How deeply the text nests mappings and sequences (block and flow), read from the YAML parser's
 * concrete syntax tree, which is built without recursion and walked here without it: composing the
 * document recurses, and a few thousand levels (`- - - …` takes two bytes a level) overflow the stack
 * or exhaust the heap of the gateway.
 */
function nestingDepth(text: string): number {
  let deepest = 0;
  for (const token of new Parser().parse(text)) {
    const pending: Array<[unknown, number]> = token.type === 'document' ? [[token.value, 0]] : [];
    for (let next = pending.pop(); next; next = pending.pop()) {
      const [node, depth] = next;
      if (typeof node === 'object' && node !== null && 'items' in node && Array.isArray(node.items)) {
        deepest = Math.max(deepest, depth + 1);
        for (const item of node.items as Array<{ key?: unknown; value?: unknown }>) {
          pending.push([item.key, depth + 1], [item.value, depth + 1]);
        }
      }
    }
  }
  return deepest;
}

/** What only a tenant agent must respect, on the fields that parsed (paths relative to the definition). */
function tenantProblems({ model, schedules = [], delegates = [] }: AgentFields, catalog: AgentCatalog): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  if (model?.provider === 'anthropic' && !catalog.anthropicAvailable) {
    issues.push({ field: 'model.provider', reason: 'anthropic is not available on this deployment (no ANTHROPIC_API_KEY is configured); use scripted' });
  }
  if (schedules.length > 0) {
    issues.push({ field: 'schedules', reason: "tenant agents have no schedules; schedules belong to the deployment's agents" });
  }
  delegates.forEach((delegate, i) => {
    if (!catalog.find(delegate)) {
      issues.push({ field: `delegates.${i}`, reason: `"${delegate}" is not a global agent; a tenant agent delegates only to the deployment's agents` });
    }
  });
  return issues;
}

function at(field: string): string {
  return field === '(root)' ? FIELD : `${FIELD}.${field}`;
}
