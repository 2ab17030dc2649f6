import type { Command } from 'commander';
import type { ActionFactory } from '../cli.context';
import { EXIT, UsageError } from '../cli.errors';
import { readAll } from './stdin.read';

export function registerMsgCommand(program: Command, action: ActionFactory): void {
  program
    .command('msg')
    .description('send a message to a run; the agent reads it between steps')
    .argument('<run>', 'run id')
    .argument('<text...>', 'the message (quote it, or the words are joined with spaces; "-" reads it from stdin)')
    .addHelpText(
      'after',
      [
        '',
        'The message is queued and passed to the agent before its next model call; while the run waits',
        '(for an answer, or in a stage that takes no messages) it stays queued. A text starting with "-"',
        'goes after "--": parley msg <run> -- "-5 degrees is fine"',
      ].join('\n'),
    )
    .action(
      action(async (ctx, cmd) => {
        const [runId, words] = cmd.processedArgs as [string, string[]];
        const text = words.length === 1 && words[0] === '-' ? await readAll(ctx.io.stdin) : words.join(' ');
        if (text.trim() === '') {
          throw new UsageError('the message must not be empty');
        }
        const queued = await ctx.api().sendMessage(runId, text);
        if (ctx.json) {
          ctx.printJson({ runId, ...queued });
        } else {
          ctx.line(`message ${queued.messageId} queued for run ${runId} (${queued.pending} pending)`);
        }
        return EXIT.ok;
      }),
    );
}
