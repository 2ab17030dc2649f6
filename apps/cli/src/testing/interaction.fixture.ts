import type { Interaction } from '@parley/contracts';

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
