import type { Readable } from 'node:stream';
import { Option, type Command } from 'commander';
import type { ActionFactory, CliContext } from '../cli.context';
import { EXIT, UsageError } from '../cli.errors';
import { formatAnswer, summarizeInteraction } from '../format/interaction.format';
import { formatInteractionsTable } from '../format/listing.format';
import { collect } from './option.parsers';
import { answerFromFlags, hasAnswerFlags, type AnswerFlags } from './respond.options';

interface RespondOptions {
  choice?: string[];
  approve?: boolean;
  deny?: boolean;
  feedback?: string;
  run?: string;
}

export function registerRespondCommand(program: Command, action: ActionFactory): void {
  program
    .command('respond')
    .description('list open questions, or answer one')
    .argument('[id]', 'interaction to answer; without it, open interactions are listed')
    .argument('[text]', 'answer to a free_text or edit_text question ("-" reads it from stdin)')
    .option('--choice <n>', 'option number, 0-based (repeat it or use a comma list to pick several)', collect)
    .addOption(new Option('--approve', 'say yes to a confirm, approve a review').conflicts('deny'))
    .addOption(new Option('--deny', 'say no to a confirm, reject a review').conflicts('approve'))
    .option('--feedback <text>', 'feedback that comes with a review verdict')
    .option('--run <runId>', 'when listing: only this run')
    .addHelpText('after', '\nA text starting with "-" goes after "--": parley respond <id> -- "-5 degrees"')
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
        };
        if (id === undefined) {
          if (hasAnswerFlags(flags)) {
            throw new UsageError('give the id of the interaction to answer (parley respond <id> ...)');
          }
          return listOpen(ctx, options.run);
        }
        if (options.run !== undefined) {
          throw new UsageError('--run only filters the listing; it cannot be used when answering');
        }
        return answer(ctx, id, flags);
      }),
    );
}

async function listOpen(ctx: CliContext, runId: string | undefined): Promise<number> {
  const interactions = await ctx.api().listInteractions({ status: 'open', runId });
  if (ctx.json) {
    ctx.printJson(interactions.map(summarizeInteraction));
  } else if (interactions.length === 0) {
    ctx.line('no open interactions');
  } else {
    ctx.write(formatInteractionsTable(interactions, new Date()));
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

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(chunks).toString('utf8');
}
