import type { Interaction, Prompt } from '@parley/contracts';

/** An interaction of run r1 in tenant dev, open, with `fields` over it: for specs of the CLI. */
export function interactionFixture(fields: Partial<Interaction> = {}): Interaction {
  return {
    id: 'i1',
    tenant: 'dev',
    runId: 'r1',
    owner: 'cli',
    agent: 'echo',
    waitReason: 'question',
    prompt: { kind: 'free_text', prompt: 'q' },
    status: 'open',
    createdAt: 'T',
    deadline: null,
    ...fields,
  };
}

type ApprovalPrompt = Extract<Prompt, { kind: 'tool_approval' }>;

/** The approval a shell call of `command` asks for, in stage build, with `grant` (default: none to offer). */
export function shellApprovalPrompt(command: string, grant: ApprovalPrompt['grant'] = { reusable: false, reason: 'no' }): ApprovalPrompt {
  return {
    kind: 'tool_approval',
    prompt: `Run shell command: ${command}`,
    tool: 'shell',
    input: { command },
    telling: { label: 'command', value: command },
    stage: 'build',
    grant,
  };
}
