import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { StreamUnavailableError, EventStream } from '../api/event.stream';
import { tokenSubject } from '../api/token.subject';
import type { ActionFactory, CliContext } from '../cli.context';
import { EXIT, UsageError } from '../cli.errors';
import { InteractionPrompter } from '../prompt/interaction.prompter';
import { LineReader } from '../prompt/line.reader';
import { RunFollower } from './run.follower';

interface RunOptions {
  detach?: boolean;
  unattended?: boolean;
}

export function registerRunCommand(program: Command, action: ActionFactory): void {
  program
    .command('run')
    .description('start a run and follow it, answering its questions in the terminal')
    .argument('<agent>', 'agent name (see: parley agents)')
    .argument('<task...>', 'what the agent should do (quote it, or the words are joined with spaces)')
    .option('-d, --detach', 'print the run id and exit instead of following the run')
    .option('--unattended', 'nobody watches the run: the agent gets no human tools and tool approvals follow its policy')
    .addHelpText(
      'after',
      [
        '',
        'Questions are asked on stdin: free text on one line; option numbers (0-based, comma-separated',
        'when several may be picked); y/n to confirm; for a document edit, the new text ended by a line',
        'with a single "." (an empty first line keeps the document); for a review, y/n then optional feedback;',
        'for a tool approval, o (allow once), s (for this stage), r (for this run), e (edit the arguments as JSON,',
        'then o/s/r) or d (deny, then an optional reason for the model).',
        'A checkpoint at a stage boundary is asked like any question, with its point, stage and round shown.',
        'With --unattended the agent cannot ask and approvals follow its unattended_approval policy; only',
        'checkpoints set to `unattended: ask` still stop the run, and are asked here.',
        'With --json, the first line on stdout is {"runId": "..."}, then one JSON line per event; prompts go to stderr.',
        'Prompts also go to stderr when stdout is redirected and stderr is a terminal (parley run ... > transcript.txt).',
        'Exit codes: 0 finished, 1 failed or cancelled (or error), 130 interrupted.',
      ].join('\n'),
    )
    .action(
      action(async (ctx, cmd) => {
        const [agent, words] = cmd.processedArgs as [string, string[]];
        const task = words.join(' ').trim();
        if (task === '') {
          throw new UsageError('the task must not be empty');
        }
        const { detach, unattended } = cmd.opts<RunOptions>();
        const following = detach !== true;
        // A person following the run in a terminal is chatting with the agent; a detached start is a program's.
        const run = await ctx.api().startRun(agent, task, { trigger: following ? 'chat' : 'api', ...(unattended === true ? { unattended: true } : {}) });
        const what = `agent ${run.agent}${run.unattended ? ', unattended' : ''}`;
        if (!following) {
          if (ctx.json) {
            ctx.line(JSON.stringify({ runId: run.id }));
          } else {
            ctx.line(`started run ${run.id} (${what})`);
            ctx.line(`follow it with: parley logs ${run.id} -f`);
          }
          return EXIT.ok;
        }
        // Said before following: if following fails, the run still exists and this is how to find it.
        if (ctx.json) {
          ctx.line(JSON.stringify({ runId: run.id }));
        } else {
          ctx.line(`run ${run.id} started (${what})`);
        }
        return followRun(ctx, run.id);
      }),
    );
}

/** Follows a run to its end over socket.io, prompting for its questions; returns the exit code. */
export async function followRun(ctx: CliContext, runId: string): Promise<number> {
  const { baseUrl, token } = ctx.connection();
  const api = ctx.api();
  const subject = tokenSubject(token);
  // Prompts stay off a redirected stdout (a transcript, a pipe) while the person can see stderr.
  const promptsOnStderr = ctx.json || (!isTty(ctx.io.stdout) && isTty(ctx.io.stderr));
  const promptOutput = promptsOnStderr ? ctx.io.stderr : ctx.io.stdout;
  let reader: LineReader | undefined;
  let prompter: InteractionPrompter | undefined;

  const follower: RunFollower = new RunFollower({
    runId,
    json: ctx.json,
    promptsOnStderr,
    subject,
    stdout: ctx.io.stdout,
    stderr: ctx.io.stderr,
    prompter: () => {
      reader ??= new LineReader(ctx.io.stdin, promptOutput, () => follower.interrupt());
      prompter ??= new InteractionPrompter(reader, (text) => promptOutput.write(text));
      return prompter;
    },
    // Questions only come in through the stream, so it exists by the time an answer is sent.
    answer: async (interactionId, body) => {
      try {
        return await stream.answer(interactionId, body);
      } catch (error) {
        if (!(error instanceof StreamUnavailableError)) {
          throw error;
        }
        // The socket may have delivered it all the same: a 409 for this very answer is a success.
        return api.answer(interactionId, body, { sentBefore: true });
      }
    },
    lookup: (interactionId) => api.getInteraction(interactionId),
  });

  const stream = new EventStream({
    baseUrl,
    token,
    runId,
    since: 0,
    onEvent: (event) => follower.handle(event),
    onNotice: (message) => follower.notice(message),
    onFatal: (error) => follower.fail(error),
  });
  try {
    return await follower.outcome;
  } finally {
    stream.close();
    reader?.close();
  }
}

function isTty(stream: Writable): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}
