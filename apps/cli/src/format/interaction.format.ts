import type { Actor, Answer, ApprovalDecision, ApprovalPrompt, CheckpointRef, Interaction, Outcome, Prompt } from '@parley/contracts';
import { brief, indent } from './text';
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
  agent: string;
  /** tool_approval only: the tool the call is for. */
  tool?: string;
  /** tool_approval only, while an admin holds it. */
  claim?: { subject: string; until: string };
  /** A checkpoint at a stage boundary: which stage and point, which round, and whether it asks for an edit. */
  checkpoint?: CheckpointRef;
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
    agent: interaction.agent,
    ...(prompt.kind === 'tool_approval' ? { tool: prompt.tool } : {}),
    ...(interaction.claim === undefined ? {} : { claim: interaction.claim }),
    ...(interaction.checkpoint === undefined ? {} : { checkpoint: interaction.checkpoint }),
  };
}

/** "checkpoint review of stage plan, round 0"; an edit round says so: "..., round 1 (edit)". */
export function formatCheckpointRef(ref: CheckpointRef): string {
  const text = `checkpoint ${ref.point} of stage ${ref.stage}, round ${ref.round}`;
  switch (ref.purpose) {
    case 'decide':
      return text;
    case 'edit':
      return `${text} (edit)`;
  }
}

/** "approved once", "approved for this stage", "approved for this run", "denied". */
export function formatDecision(decision: ApprovalDecision): string {
  switch (decision) {
    case 'allow_once':
      return 'approved once';
    case 'allow_stage':
      return 'approved for this stage';
    case 'allow_run':
      return 'approved for this run';
    case 'deny':
      return 'denied';
  }
}

/** "claimed by bob until 2030-01-01T00:05:00.000Z". */
export function formatClaim(claim: { subject: string; until: string }): string {
  return `claimed by ${claim.subject} until ${claim.until}`;
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

/** How an interaction was resolved; an approval's `decision` says what the approver (or the deadline) chose. */
export function formatResolution(outcome: Outcome, by: Actor, at: string, decision?: ApprovalDecision): string {
  if (decision !== undefined) {
    // A deadline or a stop denies an approval like a person would: "denied by the deadline".
    return outcome === 'cancelled' ? `denied: cancelled by ${formatActor(by)} at ${at}` : `${formatDecision(decision)} by ${formatActor(by)} at ${at}`;
  }
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
    case 'tool_approval': {
      const decision = formatDecision(answer.decision);
      if (answer.decision === 'deny') {
        return answer.reason === undefined ? decision : `${decision}: ${JSON.stringify(brief(answer.reason, 200))}`;
      }
      return answer.edited ? `${decision}, with edited arguments` : decision;
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
    case 'tool_approval':
      return `${base} --approve|--edit '<json>' [--stage|--run]  or  --deny [--reason "<text>"]`;
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
  if (interaction.claim !== undefined) {
    meta.push(formatClaim(interaction.claim));
  }
  const lines = [''];
  if (interaction.checkpoint !== undefined) {
    lines.push(`── ${formatCheckpointRef(interaction.checkpoint)}`);
  }
  lines.push(`? ${prompt.prompt}`, `  (${meta.join(' · ')})`);
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
    case 'tool_approval':
      lines.push(...approvalLines(interaction.id, prompt));
      break;
  }
  return `${lines.join('\n')}\n`;
}

const TELLING_LABEL = { command: 'Command', path: 'Path', host: 'Host' } as const;

/** The call, its arguments, and what each answer would grant. */
function approvalLines(id: string, prompt: ApprovalPrompt): string[] {
  const lines = [
    `  Tool: ${prompt.tool}`,
    `  ${TELLING_LABEL[prompt.telling.label]}: ${prompt.telling.value}`,
    '  Arguments:',
    indent(JSON.stringify(prompt.input, null, 2), '    '),
  ];
  const { grant } = prompt;
  if (grant.reusable) {
    lines.push(`  For this stage (${prompt.stage}): allows ${grant.description} while the run is in this stage.`);
    lines.push(`  For this run: allows ${grant.description} for the rest of the run.`);
    if (grant.directories !== undefined && grant.directories.length > 0) {
      const folders = grant.directories.map(formatFolder).join(', ');
      lines.push(`  To grant a folder instead (${folders}): parley respond ${id} --approve --stage|--run --dir <folder>`);
    }
    lines.push('  o) allow once   s) allow for this stage   r) allow for this run   e) edit arguments   d) deny');
  } else {
    lines.push(`  No reusable grant: ${grant.reason}`);
    lines.push('  o) allow once   e) edit arguments   d) deny');
  }
  return lines;
}

/** A folder a file-tool grant may cover; "" is the whole workspace. */
export function formatFolder(folder: string): string {
  return folder === '' ? '"" (whole workspace)' : folder;
}
