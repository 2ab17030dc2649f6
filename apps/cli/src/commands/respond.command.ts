import { Option, type Command } from 'commander';
import type { ActionFactory, CliContext } from '../cli.context';
import { EXIT, UsageError } from '../cli.errors';
import { formatAnswer, summarizeInteraction } from '../format/interaction.format';
import { formatInteractionsTable } from '../format/listing.format';
import { collect } from './option.parsers';
import { answerFromFlags, hasAnswerFlags, type AnswerFlags } from './respond.options';
import { readAll } from './stdin.read';

interface RespondOptions {
  choice?: string[];
  approve?: boolean;
  deny?: boolean;
  feedback?: string;
  edit?: string;
  stage?: boolean;
  /** A run id when listing; `true` (no value) when approving a tool call for the rest of the run. */
  run?: string | boolean;
  dir?: string;
  reason?: string;
  after?: string;
}

export function registerRespondCommand(program: Command, action: ActionFactory): void {
  program
    .command('respond')
    .description('list open questions, or answer one')
    .argument('[id]', 'interaction to answer; without it, open interactions are listed')
    .argument('[text]', 'answer to a free_text or edit_text question ("-" reads it from stdin)')
    .option('--choice <n>', 'option number, 0-based (repeat it or use a comma list to pick several)', collect)
    .addOption(new Option('--approve', 'say yes to a confirm, approve a review, allow a tool call (once unless --stage or --run)').conflicts('deny'))
    .addOption(new Option('--deny', 'say no to a confirm, reject a review, deny a tool call').conflicts('approve'))
    .option('--feedback <text>', 'feedback that comes with a review verdict')
    .option('--edit <json>', "tool approval: allow the call with these arguments instead (a JSON object; implies --approve)")
    .option('--stage', 'tool approval: allow such calls for as long as the run stays in this stage')
    .option('--run [runId]', 'tool approval: allow such calls for the rest of the run; when listing: only this run (give its id)')
    .option('--dir <folder>', 'tool approval of a file tool, with --stage or --run: grant this folder instead of the file ("" = whole workspace)')
    .option('--reason <text>', 'tool approval, with --deny: why, told to the model')
    .option('--after <cursor>', 'when listing: the page after the one that printed this cursor')
    .addHelpText(
      'after',
      [
        '',
        'A text starting with "-" goes after "--": parley respond <id> -- "-5 degrees"',
        'Tool approvals: --approve (once) | --approve --stage | --approve --run | --approve --run --dir notes/',
        "  | --edit '{\"command\": \"ls\"}' [--stage|--run] | --deny [--reason \"...\"]",
      ].join('\n'),
    )
    .action(
      action(async (ctx, cmd) => {
        const [id, text] = cmd.processedArgs as [string | undefined, string | undefined];
        const options = cmd.opts<RespondOptions>();
        const flags: AnswerFlags = {
          text,
          choice: options.choice ?? [],
          approve: options.approve === true,
          deny: options.deny === true,
          feedback: options.feedback,
          edit: options.edit,
          stage: options.stage === true,
          run: options.run === true,
          dir: options.dir,
          reason: options.reason,
        };
        if (id !== undefined && options.after !== undefined) {
          throw new UsageError('--after pages the listing: give it without an interaction id (parley respond --after <cursor>)');
        }
        if (id === undefined) {
          if (options.run === true && !hasAnswerFlags({ ...flags, run: false })) {
            throw new UsageError('--run needs a run id to filter the listing (parley respond --run <runId>)');
          }
          if (hasAnswerFlags(flags)) {
            throw new UsageError('give the id of the interaction to answer (parley respond <id> ...)');
          }
          return listOpen(ctx, typeof options.run === 'string' ? options.run : undefined, options.after);
        }
        if (typeof options.run === 'string') {
          throw new UsageError(
            `--run ${options.run}: a run id only filters the listing; to approve a tool call for the rest of the run, give --run without a value (parley respond <id> --approve --run)`,
          );
        }
        return answer(ctx, id, flags);
      }),
    );
}

async function listOpen(ctx: CliContext, runId: string | undefined, after: string | undefined): Promise<number> {
  const { interactions, next } = await ctx.api().listInteractions({ status: 'open', runId, after });
  if (ctx.json) {
    ctx.printJson(interactions.map(summarizeInteraction));
  } else if (interactions.length === 0) {
    ctx.line('no open interactions');
  } else {
    ctx.write(formatInteractionsTable(interactions, new Date()));
  }
  if (next !== null) {
    // On stderr, so that --json output stays one array.
    ctx.warn(`more open interactions may wait past these ${interactions.length} (soonest deadline first): parley respond --after ${next}${runId === undefined ? '' : ` --run ${runId}`}`);
  }
  return EXIT.ok;
}

async function answer(ctx: CliContext, id: string, flags: AnswerFlags): Promise<number> {
  const api = ctx.api();
  const interaction = await api.getInteraction(id);
  const text = flags.text === '-' ? await readAll(ctx.io.stdin) : flags.text;
  const body = answerFromFlags(interaction.prompt, { ...flags, text });
  const resolved = await api.answer(id, body);
  if (ctx.json) {
    ctx.printJson(resolved);
  } else {
    ctx.line(`answered ${resolved.id} (${resolved.prompt.kind}): ${formatAnswer(resolved.answer)}`);
  }
  return EXIT.ok;
}
