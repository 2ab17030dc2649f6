import type { Actor, Answer, Interaction, Outcome, Prompt } from '@parley/contracts';
import { brief } from './text';
import { formatDeadline } from './time';

/** What `parley respond --json` prints for each open interaction. */
export interface InteractionSummary {
  id: string;
  runId: string;
  kind: Prompt['kind'];
  prompt: string;
  /** Option labels in index order; empty unless the kind is multiple_choice. */
  options: string[];
  deadline: string | null;
}

export function summarizeInteraction(interaction: Interaction): InteractionSummary {
  const { prompt } = interaction;
  return {
    id: interaction.id,
    runId: interaction.runId,
    kind: prompt.kind,
    prompt: prompt.prompt,
    options: prompt.kind === 'multiple_choice' ? prompt.options.map((option) => option.label) : [],
    deadline: interaction.deadline,
  };
}

export function formatActor(actor: Actor): string {
  switch (actor.kind) {
    case 'user':
      return actor.subject ?? 'a user';
    case 'deadline':
      return 'the deadline';
    case 'system':
      return 'the system';
  }
}

export function formatResolution(outcome: Outcome, by: Actor, at: string): string {
  switch (outcome) {
    case 'answered':
      return `answered by ${formatActor(by)} at ${at}`;
    case 'expired':
      return `expired at ${at}`;
    case 'cancelled':
      return `cancelled by ${formatActor(by)} at ${at}`;
  }
}

export function formatAnswer(answer: Answer | undefined): string {
  if (answer === undefined) {
    return '(no answer)';
  }
  switch (answer.kind) {
    case 'free_text':
    case 'edit_text':
      return JSON.stringify(brief(answer.text, 200));
    case 'multiple_choice':
      return answer.choices.map((choice, index) => `${choice}) ${answer.labels[index] ?? ''}`.trim()).join(', ');
    case 'confirm':
      return answer.confirmed ? 'yes' : 'no';
    case 'review': {
      const verdict = answer.approved ? 'approved' : 'denied';
      return answer.feedback === undefined ? verdict : `${verdict}: ${JSON.stringify(brief(answer.feedback, 200))}`;
    }
  }
}

/** Options on one line for tables: "0) Red | 1) Green". */
export function formatOptionsInline(prompt: Prompt): string {
  if (prompt.kind !== 'multiple_choice') {
    return '';
  }
  const list = prompt.options.map((option, index) => `${index}) ${option.label}`).join(' | ');
  return prompt.multi ? `${list} (multi)` : list;
}

/** How to answer an interaction of this kind with `parley respond`. */
export function respondHint(interaction: Interaction): string {
  const base = `parley respond ${interaction.id}`;
  switch (interaction.prompt.kind) {
    case 'free_text':
    case 'edit_text':
      return `${base} "<text>"`;
    case 'multiple_choice':
      return interaction.prompt.multi ? `${base} --choice N[,N...]` : `${base} --choice N`;
    case 'confirm':
      return `${base} --approve|--deny`;
    case 'review':
      return `${base} --approve|--deny [--feedback "<text>"]`;
  }
}

const RULE = '─'.repeat(40);

/** The block shown above a terminal prompt: the question and everything needed to answer it. */
export function formatInteractionBlock(interaction: Interaction, now: Date): string {
  const { prompt } = interaction;
  const meta = [prompt.kind, `interaction ${interaction.id}`];
  if (interaction.deadline !== null) {
    meta.push(`expires ${formatDeadline(interaction.deadline, now)}`);
  }
  const lines = ['', `? ${prompt.prompt}`, `  (${meta.join(' · ')})`];
  switch (prompt.kind) {
    case 'free_text':
      lines.push('  Type your answer on one line.');
      break;
    case 'multiple_choice':
      for (const [index, option] of prompt.options.entries()) {
        lines.push(`  ${index}) ${option.label}${option.description === undefined ? '' : ` — ${option.description}`}`);
      }
      lines.push(prompt.multi ? '  Pick one or more numbers, separated by commas.' : '  Pick one number.');
      break;
    case 'confirm':
      lines.push('  Answer y or n.');
      break;
    case 'edit_text':
      lines.push(RULE, prompt.document, RULE);
      lines.push('  Type the replacement text, then a line with a single "." to finish.');
      lines.push('  Press Enter on the first line to keep the document as it is.');
      break;
    case 'review':
      lines.push(RULE, prompt.markdown, RULE);
      lines.push('  Approve (y/n), then optional feedback.');
      break;
  }
  return `${lines.join('\n')}\n`;
}
