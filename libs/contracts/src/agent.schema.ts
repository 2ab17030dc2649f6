import { z } from 'zod';

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
