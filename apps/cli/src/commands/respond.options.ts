import { grantFolder, type AnswerBody, type ApprovalDecision, type ApprovalPrompt, type Prompt } from '@parley/contracts';
import { UsageError } from '../cli.errors';
import { formatFolder } from '../format/interaction.format';
import { parseChoice, parseJsonObject } from '../prompt/answer.parsing';

/** The answer-related parts of `parley respond <id> [text] [flags]`. */
export interface AnswerFlags {
  text?: string;
  /** Raw --choice values: repeated flags and/or comma lists. */
  choice: string[];
  approve: boolean;
  deny: boolean;
  feedback?: string;
  /** tool_approval: allow for the current stage / for the rest of the run instead of once. */
  stage?: boolean;
  run?: boolean;
  /** tool_approval of a file tool, with --stage or --run: grant this folder instead of the single path. */
  dir?: string;
  /** tool_approval, with --deny: why, shown to the model. */
  reason?: string;
  /** tool_approval: the edited arguments as JSON text (implies --approve). */
  edit?: string;
}

const FLAGS_BY_KIND: Record<Prompt['kind'], readonly string[]> = {
  free_text: ['<text>'],
  edit_text: ['<text>'],
  multiple_choice: ['--choice'],
  confirm: ['--approve', '--deny'],
  review: ['--approve', '--deny', '--feedback'],
  tool_approval: ['--approve', '--deny', '--edit', '--stage', '--run', '--dir', '--reason'],
};

export function hasAnswerFlags(flags: AnswerFlags): boolean {
  return givenFlags(flags).length > 0;
}

/** Maps flags onto the AnswerBody the interaction's kind expects; throws UsageError when they do not fit. */
export function answerFromFlags(prompt: Prompt, flags: AnswerFlags): AnswerBody {
  const allowed = FLAGS_BY_KIND[prompt.kind];
  const misplaced = givenFlags(flags).filter((flag) => !allowed.includes(flag));
  if (misplaced.length > 0) {
    throw new UsageError(`${misplaced.join(', ')} cannot answer a ${prompt.kind} interaction (use ${allowed.join(' / ')})`);
  }
  switch (prompt.kind) {
    case 'free_text':
    case 'edit_text':
      if (flags.text === undefined) {
        throw new UsageError(`a ${prompt.kind} interaction needs a text: parley respond <id> "<text>" (or "-" to read stdin)`);
      }
      return { text: flags.text };
    case 'multiple_choice': {
      if (flags.choice.length === 0) {
        throw new UsageError(`a multiple_choice interaction needs --choice N (0-${prompt.options.length - 1})`);
      }
      const parsed = parseChoice(flags.choice.join(','), prompt);
      if (!parsed.ok) {
        throw new UsageError(`--choice: ${parsed.error}`);
      }
      return parsed.value;
    }
    case 'confirm':
      return { confirmed: verdict(prompt.kind, flags) };
    case 'review': {
      const approved = verdict(prompt.kind, flags);
      return flags.feedback === undefined ? { approved } : { approved, feedback: flags.feedback };
    }
    case 'tool_approval':
      return approvalFromFlags(prompt, flags);
  }
}

function verdict(kind: Prompt['kind'], flags: AnswerFlags): boolean {
  if (flags.approve === flags.deny) {
    throw new UsageError(`a ${kind} interaction needs exactly one of --approve or --deny`);
  }
  return flags.approve;
}

/**
 * --approve [--stage|--run] [--dir F] [--edit JSON], or --deny [--reason R]. The gateway checks the
 * edited arguments against the tool's schema (422 naming the field); everything else is checked here.
 */
function approvalFromFlags(prompt: ApprovalPrompt, flags: AnswerFlags): AnswerBody {
  const allows = flags.approve || flags.edit !== undefined;
  if (allows === flags.deny) {
    throw new UsageError(
      flags.deny
        ? '--deny cannot be combined with --approve or --edit'
        : "a tool_approval interaction needs --approve (allow once; add --stage or --run for longer), --edit '<json>' or --deny",
    );
  }
  if (flags.deny) {
    const scoped = givenFlags(flags).filter((flag) => ['--stage', '--run', '--dir'].includes(flag));
    if (scoped.length > 0) {
      throw new UsageError(`${scoped.join(', ')} only go with --approve or --edit, not with --deny`);
    }
    return flags.reason === undefined ? { decision: 'deny' } : { decision: 'deny', reason: flags.reason };
  }
  if (flags.reason !== undefined) {
    throw new UsageError('--reason only goes with --deny (it tells the model why the call was denied)');
  }
  if (flags.stage === true && flags.run === true) {
    throw new UsageError('--stage and --run cannot be combined: choose how long the approval lasts');
  }
  const decision: ApprovalDecision = flags.run === true ? 'allow_run' : flags.stage === true ? 'allow_stage' : 'allow_once';
  if (decision !== 'allow_once' && !prompt.grant.reusable) {
    throw new UsageError(`${flags.run === true ? '--run' : '--stage'}: ${prompt.grant.reason} Approve it once (without --stage or --run).`);
  }
  const body: AnswerBody = { decision };
  if (flags.edit !== undefined) {
    const parsed = parseJsonObject(flags.edit);
    if (!parsed.ok) {
      throw new UsageError(`--edit: ${parsed.error}`);
    }
    body.input = parsed.value;
  }
  if (flags.dir !== undefined) {
    body.directory = folderFromFlag(prompt, flags.dir, decision);
  }
  return body;
}

function folderFromFlag(prompt: ApprovalPrompt, dir: string, decision: ApprovalDecision): string {
  if (decision === 'allow_once') {
    throw new UsageError('--dir needs --stage or --run: a folder grant lasts for the stage or the run');
  }
  const folders = prompt.grant.reusable ? prompt.grant.directories : undefined;
  if (folders === undefined || folders.length === 0) {
    throw new UsageError(`--dir: ${prompt.tool} grants are not kept per folder`);
  }
  const folder = grantFolder(dir);
  if (!folders.includes(folder)) {
    throw new UsageError(`--dir: "${dir}" does not hold ${prompt.telling.value}; choose one of ${folders.map(formatFolder).join(', ')}`);
  }
  return folder;
}

function givenFlags(flags: AnswerFlags): string[] {
  const given: string[] = [];
  const add = (flag: string, present: boolean): void => {
    if (present) {
      given.push(flag);
    }
  };
  add('<text>', flags.text !== undefined);
  add('--choice', flags.choice.length > 0);
  add('--approve', flags.approve);
  add('--deny', flags.deny);
  add('--feedback', flags.feedback !== undefined);
  add('--edit', flags.edit !== undefined);
  add('--stage', flags.stage === true);
  add('--run', flags.run === true);
  add('--dir', flags.dir !== undefined);
  add('--reason', flags.reason !== undefined);
  return given;
}
