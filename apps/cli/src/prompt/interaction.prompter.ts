import type { AnswerBody, ApprovalDecision, ApprovalPrompt, Interaction, Prompt } from '@parley/contracts';
import { formatInteractionBlock } from '../format/interaction.format';
import { escapeControls } from '../format/text';
import {
  EditTextCollector,
  JsonArgumentsCollector,
  parseApprovalChoice,
  parseApprovalScope,
  parseChoice,
  parseFeedback,
  parseFreeText,
  parseYesNo,
  type Parsed,
} from './answer.parsing';
import { EndOfInputError, type LineSource } from './line.reader';

const DECISIONS: Record<'once' | 'stage' | 'run', ApprovalDecision> = { once: 'allow_once', stage: 'allow_stage', run: 'allow_run' };

/**
 * Turns an interaction into terminal prompts and the person's input into an AnswerBody. Invalid
 * input is explained and asked again; it never reaches the gateway. What is shown is escaped for
 * the terminal: prompts, documents and arguments come from a model.
 */
export class InteractionPrompter {
  private readonly write: (text: string) => void;

  constructor(
    private readonly lines: LineSource,
    write: (text: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.write = (text) => write(escapeControls(text));
  }

  /** `problem` is the gateway's reason for rejecting the previous answer; the question is then not repeated. */
  async ask(interaction: Interaction, signal: AbortSignal, problem?: string): Promise<AnswerBody> {
    const discarded = this.lines.discardTypeAhead();
    if (problem === undefined) {
      this.write(formatInteractionBlock(interaction, this.now()));
    } else {
      this.write(`  ! ${problem} — please answer again.\n`);
    }
    if (discarded > 0) {
      this.write(`  (${discarded === 1 ? '1 line' : `${discarded} lines`} typed before this question ignored)\n`);
    }
    const { prompt } = interaction;
    switch (prompt.kind) {
      case 'free_text':
        return this.until('> ', parseFreeText, signal);
      case 'multiple_choice':
        return this.until(prompt.multi ? 'choices> ' : 'choice> ', (input) => parseChoice(input, prompt), signal);
      case 'confirm':
        return { confirmed: await this.until('y/n> ', parseYesNo, signal) };
      case 'edit_text':
        return { text: await this.edit(prompt, signal) };
      case 'review': {
        const approved = await this.until('approve? y/n> ', parseYesNo, signal);
        const feedback = await this.optional('feedback (optional)> ', signal);
        return feedback === undefined ? { approved } : { approved, feedback };
      }
      case 'tool_approval':
        return this.approval(prompt, signal);
    }
  }

  /** o/s/r allow (once, for the stage, for the run), e edits the arguments first, d denies with an optional reason. */
  private async approval(prompt: ApprovalPrompt, signal: AbortSignal): Promise<AnswerBody> {
    const { reusable } = prompt.grant;
    const choice = await this.until(reusable ? 'o/s/r/e/d> ' : 'o/e/d> ', (input) => parseApprovalChoice(input, reusable), signal);
    switch (choice) {
      case 'once':
      case 'stage':
      case 'run':
        return { decision: DECISIONS[choice] };
      case 'deny': {
        const reason = await this.optional('reason for the model (optional)> ', signal);
        return reason === undefined ? { decision: 'deny' } : { decision: 'deny', reason };
      }
      case 'edit': {
        this.write('  Type the arguments as JSON (on one line, or over several lines until complete); an empty line keeps them as they are.\n');
        const input = await this.editArguments(signal);
        this.write('  Allow the call once (o), for this stage (s) or for this run (r)? A grant follows the edited call.\n');
        const decision = DECISIONS[await this.until('o/s/r> ', parseApprovalScope, signal)];
        return input === undefined ? { decision } : { decision, input };
      }
    }
  }

  private async editArguments(signal: AbortSignal): Promise<Record<string, unknown> | undefined> {
    const collector = new JsonArgumentsCollector();
    for (;;) {
      const step = collector.feed(await this.lines.read(collector.pending ? '...> ' : 'json> ', signal));
      if (step.done) {
        return step.value;
      }
      if (step.error !== undefined) {
        this.write(`  ${step.error}\n`);
      }
    }
  }

  /** An optional field: the end of input means "none", so the answer given so far is still sent. */
  private async optional(label: string, signal: AbortSignal): Promise<string | undefined> {
    try {
      return parseFeedback(await this.lines.read(label, signal));
    } catch (error) {
      if (error instanceof EndOfInputError) {
        return undefined;
      }
      throw error;
    }
  }

  private async until<T>(label: string, parse: (input: string) => Parsed<T>, signal: AbortSignal): Promise<T> {
    for (;;) {
      const result = parse(await this.lines.read(label, signal));
      if (result.ok) {
        return result.value;
      }
      this.write(`  ${result.error}\n`);
    }
  }

  private async edit(prompt: Extract<Prompt, { kind: 'edit_text' }>, signal: AbortSignal): Promise<string> {
    const collector = new EditTextCollector(prompt.document);
    for (;;) {
      const step = collector.feed(await this.lines.read('| ', signal));
      if (step.done) {
        return step.text;
      }
    }
  }
}
