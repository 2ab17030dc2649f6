import type { Command } from 'commander';
import { isTerminalEvent, type RawEvent } from '../api/event.parse';
import { EventStream } from '../api/event.stream';
import type { ActionFactory, CliContext } from '../cli.context';
import { EXIT } from '../cli.errors';
import { formatEventLine } from '../format/event.format';

const PAGE_SIZE = 1000;

interface LogsOptions {
  follow?: boolean;
  deltas?: boolean;
}

export function registerLogsCommand(program: Command, action: ActionFactory): void {
  program
    .command('logs')
    .description("print a run's events")
    .argument('<run>', 'run id')
    .option('-f, --follow', 'keep printing live events until the run ends')
    .option('--deltas', 'also print message.delta events (the full text follows in a message event anyway)')
    .addHelpText('after', '\nWith --json, each event is printed as one JSON line (all event types).')
    .action(
      action(async (ctx, cmd) => {
        const [runId] = cmd.processedArgs as [string];
        const options = cmd.opts<LogsOptions>();
        const print = eventPrinter(ctx, options.deltas === true);
        const api = ctx.api();
        let since = 0;
        let ended = false;
        for (;;) {
          const page = await api.listEvents(runId, { since, limit: PAGE_SIZE });
          for (const event of page) {
            print(event);
            since = Math.max(since, event.seq);
            ended ||= isTerminalEvent(event);
          }
          if (page.length < PAGE_SIZE) {
            break;
          }
        }
        if (options.follow === true && !ended) {
          await followUntilEnd(ctx, runId, since, print);
        }
        return EXIT.ok;
      }),
    );
}

function eventPrinter(ctx: CliContext, deltas: boolean): (event: RawEvent) => void {
  return (event) => {
    if (ctx.json) {
      ctx.line(JSON.stringify(event));
    } else if (deltas || event.type !== 'message.delta') {
      ctx.line(formatEventLine(event));
    }
  };
}

function followUntilEnd(ctx: CliContext, runId: string, since: number, print: (event: RawEvent) => void): Promise<void> {
  const { baseUrl, token } = ctx.connection();
  return new Promise<void>((resolve, reject) => {
    const stream: EventStream = new EventStream({
      baseUrl,
      token,
      runId,
      since,
      onEvent: (event) => {
        print(event);
        if (isTerminalEvent(event)) {
          stream.close();
          resolve();
        }
      },
      onNotice: (message) => ctx.warn(message),
      onFatal: reject,
    });
  });
}
