import { z } from 'zod';
import { RESERVED_SUBJECT_PREFIX } from './ids.schema';

/** The owner of a schedule's runs when it names none. */
export const SCHEDULE_OWNER = `${RESERVED_SUBJECT_PREFIX}scheduler`;

export const AGENT_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** One turn of the scripted model: what it says and which tools it calls. */
export const ScriptedTurnSchema = z.strictObject({
  text: z.string().max(100_000).optional(),
  tool_calls: z
    .array(z.strictObject({ name: z.string().min(1).max(64), input: z.record(z.string(), z.unknown()).default({}) }))
    .max(16)
    .default([]),
});
export type ScriptedTurn = z.infer<typeof ScriptedTurnSchema>;

export const ModelConfigSchema = z.discriminatedUnion('provider', [
  z.strictObject({
    provider: z.literal('scripted'),
    turns: z.array(ScriptedTurnSchema).min(1),
  }),
  z.strictObject({
    provider: z.literal('anthropic'),
    name: z.string().min(1),
    max_tokens: z.int().min(1).max(128_000).default(4096),
    temperature: z.number().min(0).max(1).optional(),
  }),
]);
export type ModelConfig = z.infer<typeof ModelConfigSchema>;

export const LimitsSchema = z.strictObject({
  max_iterations: z.int().min(1).max(1000).default(25),
  /** 0 = the agent may not ask. */
  max_ask_user_per_loop: z.int().min(0).max(100).default(3),
  /** 0 = wait forever. */
  interaction_timeout_secs: z.int().min(0).max(30 * 24 * 3600).default(3600),
});
export type Limits = z.infer<typeof LimitsSchema>;

/** What happens when the model calls a tool: run it, ask a person first, or never offer it. */
export const PermissionSchema = z.enum(['allow', 'ask', 'deny']);
export type Permission = z.infer<typeof PermissionSchema>;

export const ShellSettingsSchema = z.strictObject({
  timeout_secs: z.int().min(1).max(600).default(30),
  max_output_bytes: z.int().min(1024).max(4 * 1024 * 1024).default(64 * 1024),
});
export type ShellSettings = z.infer<typeof ShellSettingsSchema>;

export const HttpSettingsSchema = z.strictObject({
  /** "api.example.com", "*.example.org" (subdomains), "127.0.0.1:8080" (that port only). */
  allowed_hosts: z.array(z.string().min(1).max(255)).max(100).default([]),
  timeout_secs: z.int().min(1).max(120).default(10),
  max_response_bytes: z.int().min(1024).max(8 * 1024 * 1024).default(256 * 1024),
});
export type HttpSettings = z.infer<typeof HttpSettingsSchema>;

const NAME = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be lowercase letters, digits, "_" or "-" (max 64)');
const OPTION = z.string().trim().min(1).max(200);

/** A checkpoint at a stage boundary: it fires every time the stage would move on. */
export const InteractionPointSchema = z.strictObject({
  name: NAME,
  prompt: z.string().min(1).max(4000),
  style: z.enum(['free_text', 'multiple_choice', 'confirm']).default('multiple_choice'),
  /** Options that approve. */
  options: z.array(OPTION).max(20).default([]),
  /** Options that cancel the run at once. */
  abort_options: z.array(OPTION).max(10).default([]),
  /** Options that open the stage's latest output for the person to edit. */
  edit_options: z.array(OPTION).max(10).default([]),
  /** Option → text added to the conversation; the stage runs again. */
  directives: z.record(OPTION, z.string().min(1).max(4000)).default({}),
  /** false: skipped in unattended runs. */
  required: z.boolean().default(true),
  /** What an unattended run does here: approve at once, or park and wait for a person anyway. */
  unattended: z.enum(['auto_approve', 'ask']).default('auto_approve'),
  /** A pinned region of the context holding the stage's current document. */
  document_region: NAME.optional(),
});
export type InteractionPoint = z.infer<typeof InteractionPointSchema>;

export const StageSchema = z.strictObject({
  name: NAME,
  mode: z.enum(['autonomous', 'interactive_points']).default('autonomous'),
  /** Added to the system prompt while the run is in this stage. */
  prompt: z.string().max(20_000).default(''),
  /** Override the agent's permissions while in this stage. */
  permissions: z.record(z.string().min(1).max(64), PermissionSchema).default({}),
  /** false: messages wait in the run's inbox until a stage that accepts them. */
  accepts_messages: z.boolean().default(true),
  /** Human tools kept even in an unattended run. */
  required_tools: z.array(z.string().min(1).max(64)).max(16).default([]),
  /** Stages this one may move on to; none = the last stage (it ends with finish). */
  transitions: z.array(NAME).max(16).default([]),
  points: z.array(InteractionPointSchema).max(8).default([]),
});
export type Stage = z.infer<typeof StageSchema>;

export const ScheduleSchema = z.strictObject({
  name: NAME,
  /** Cron pattern (5 fields, or 6 with seconds first, or a macro such as `@daily`), as BullMQ's job schedulers read it. */
  cron: z.string().min(1).max(100),
  /** IANA time zone the cron is read in; UTC unless given, so every host fires at the same time. */
  timezone: z.string().min(1).max(64).default('UTC'),
  tenant: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/).max(64),
  /** Who owns the runs it starts: by default nobody a token can speak for, so only admins and services see them. */
  owner: z.string().min(1).max(200).default(SCHEDULE_OWNER),
  task: z.string().min(1).max(20_000),
});
export type Schedule = z.infer<typeof ScheduleSchema>;

export const AgentDefinitionSchema = z.strictObject({
  name: z.string().regex(AGENT_NAME_PATTERN, 'must be lowercase letters, digits, "_" or "-" (max 64)'),
  description: z.string().max(2000).default(''),
  model: ModelConfigSchema,
  system_prompt: z.string().max(100_000).default(''),
  tools: z.array(z.string().min(1).max(64)).max(64).default([]),
  limits: LimitsSchema.default({ max_iterations: 25, max_ask_user_per_loop: 3, interaction_timeout_secs: 3600 }),
  /** Per tool; a tool not named here gets its default (read-only tools allow, tools with effects ask). */
  permissions: z.record(z.string().min(1).max(64), PermissionSchema).default({}),
  /** Shell programs (optionally with a subcommand, "git status") that need no approval, with any arguments. */
  safe_commands: z.array(z.string().min(1).max(200)).max(200).default([]),
  shell: ShellSettingsSchema.default({ timeout_secs: 30, max_output_bytes: 64 * 1024 }),
  http: HttpSettingsSchema.default({ allowed_hosts: [], timeout_secs: 10, max_response_bytes: 256 * 1024 }),
  /** The first stage is where a run starts; none = one implicit stage. */
  stages: z.array(StageSchema).max(32).default([]),
  /** What `ask` becomes in an unattended run, where nobody is there to approve. */
  unattended_approval: z.enum(['allow', 'deny']).default('deny'),
  /** Agents this one may start as sub-agents with the delegate tool. */
  delegates: z.array(NAME).max(32).default([]),
  schedules: z.array(ScheduleSchema).max(32).default([]),
});
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

/** What clients see of an agent (no prompt, no script). */
export const AgentSummarySchema = z.object({
  name: z.string(),
  description: z.string(),
  provider: z.enum(['scripted', 'anthropic']),
  tools: z.array(z.string()),
});
export type AgentSummary = z.infer<typeof AgentSummarySchema>;

// ---------------------------------------------------------------------------------------------
// Tenant agents: definitions a tenant's admin uploads beside the deployment's (global) agents.

/** Where an agent comes from: the deployment's agent files, or a tenant's upload. */
export const AgentSourceSchema = z.enum(['global', 'tenant']);
export type AgentSource = z.infer<typeof AgentSourceSchema>;

/** A version of a tenant agent: SHA-256 (hex) of its definition's canonical JSON, defaults filled in. */
export const AgentDigestSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 digest (64 lowercase hex characters)');

export const AgentNameSchema = z.string().regex(AGENT_NAME_PATTERN, 'must be lowercase letters, digits, "_" or "-" (max 64)');

/** Largest uploaded definition (its canonical JSON, or its YAML text). */
export const AGENT_DEFINITION_MAX_BYTES = 64 * 1024;
/** Most agents one tenant may have uploaded at once. */
export const TENANT_AGENTS_MAX = 50;

/** `PUT /v1/agents/:name`: exactly one of `definition` (an object) or `yaml` (its text). */
export const UploadAgentBodySchema = z.strictObject({
  definition: z.record(z.string(), z.unknown()).optional(),
  yaml: z.string().max(AGENT_DEFINITION_MAX_BYTES, `must be at most ${AGENT_DEFINITION_MAX_BYTES} characters`).optional(),
});
export type UploadAgentBody = z.infer<typeof UploadAgentBodySchema>;

/**
 * A power an uploaded agent grants itself, which stays inert until a platform operator enables
 * that version for the tenant: a tool that reaches past the workspace (shell, http_request), a host
 * to call, a safe command, `allow` on a tool with effects, or an unattended policy that would run
 * asked-for calls without a person.
 */
export const GatedPowerSchema = z.strictObject({
  /** Dotted path in the definition: "tools.2", "http.allowed_hosts.0", "safe_commands.0", "stages.1.permissions.shell", "unattended_approval". */
  field: z.string(),
  kind: z.enum(['tool', 'allowed_host', 'safe_command', 'allow', 'unattended_approval']),
  /** The tool, the host, the safe-command entry, or "allow". */
  value: z.string(),
  reason: z.string(),
});
export type GatedPower = z.infer<typeof GatedPowerSchema>;

/** A tenant agent as its tenant sees it. */
export const TenantAgentSchema = z.strictObject({
  name: z.string(),
  source: z.literal('tenant'),
  description: z.string(),
  provider: z.enum(['scripted', 'anthropic']),
  tools: z.array(z.string()),
  digest: z.string(),
  sizeBytes: z.int(),
  uploadedAt: z.string(),
  uploadedBy: z.string(),
  /** What this version grants itself that stays inert until an operator enables it; [] once enabled. */
  inertPowers: z.array(GatedPowerSchema),
  /** An operator enabled the powers of exactly this version for the tenant. */
  powersEnabled: z.boolean(),
});
export type TenantAgent = z.infer<typeof TenantAgentSchema>;

/** One line of `GET /v1/agents`: a global agent's summary, or a tenant agent. */
export type AgentListing = (AgentSummary & { source: 'global' }) | TenantAgent;

/** `PUT /v1/operator/tenants/:tenant/agents/:name/powers`: the version the operator reviewed. */
export const EnablePowersBodySchema = z.strictObject({ digest: AgentDigestSchema });

/** What an operator sees of a tenant agent's powers. */
export interface AgentPowers {
  tenant: string;
  agent: string;
  /** The current version. */
  digest: string;
  /** What the current version grants itself (inert unless `enabled`). */
  gatedPowers: GatedPower[];
  /** The current version's powers are enabled. */
  enabled: boolean;
  /** Every enabled version of this agent still stored (runs keep the version they started with). */
  enabledVersions: Array<{ digest: string; current: boolean; enabledBy: string; enabledAt: string }>;
}
