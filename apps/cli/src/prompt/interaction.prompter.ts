import type { AnswerBody, Interaction, Prompt } from '@parley/contracts';
import { formatInteractionBlock } from '../format/interaction.format';
import { EditTextCollector, parseChoice, parseFeedback, parseFreeText, parseYesNo, type Parsed } from './answer.parsing';
import type { LineSource } from './line.reader';

/**
 * Turns an interaction into terminal prompts and the person's input into an AnswerBody. Invalid
 * input is explained and asked again; it never reaches the gateway.
 */
export class InteractionPrompter {
  constructor(
    private readonly lines: LineSource,
    private readonly write: (text: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** `problem` is the gateway's reason for rejecting the previous answer; the question is then not repeated. */
  async ask(interaction: Interaction, signal: AbortSignal, problem?: string): Promise<AnswerBody> {
    if (problem === undefined) {
      this.write(formatInteractionBlock(interaction, this.now()));
    } else {
      this.write(`  ! ${problem} — please answer again.\n`);
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
        const feedback = parseFeedback(await this.lines.read('feedback (optional)> ', signal));
        return feedback === undefined ? { approved } : { approved, feedback };
      }
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
