import type { AgentDefinition, Stage } from '@parley/contracts';

const UNATTENDED =
  'Nobody is watching this run: you cannot ask a person anything. Work with what you have; when something only a person could ' +
  'decide is missing, say so in your result.';

/**
 * The system prompt of one model call: the agent's prompt, the current stage's addition, and the
 * pinned document regions with their current text (the model's output or a person's edit).
 */
export function systemPromptFor(agent: AgentDefinition, stage: Stage | undefined, documents: ReadonlyMap<string, string>, unattended: boolean): string {
  const parts = [agent.system_prompt.trim()];
  if (unattended) {
    parts.push(UNATTENDED);
  }
  if (stage) {
    const ways = stage.transitions.length > 0 ? `When it is done, call complete_stage (next: ${stage.transitions.join(' or ')}).` : 'It is the last stage: call finish when it is done.';
    parts.push(`Current stage: ${stage.name}. ${ways}`);
    if (stage.prompt.trim() !== '') {
      parts.push(stage.prompt.trim());
    }
  }
  for (const [region, text] of documents) {
    // "~<stage>" holds a stage's output when no region was declared: the points use it, the model does not see it.
    if (region.startsWith('~')) {
      continue;
    }
    parts.push(`<document region="${region}">\n${text}\n</document>`);
  }
  return parts.filter((part) => part !== '').join('\n\n');
}
