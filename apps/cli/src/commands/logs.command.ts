import type { Command } from 'commander';
import type { RunStatus } from '@parley/contracts';
import type { ApiClient } from '../api/api.client';
import { isTerminalEvent, isTerminalStatus, type RawEvent } from '../api/event.parse';
import { EventStream } from '../api/event.stream';
import type { ActionFactory, CliContext } from '../cli.context';
import { EXIT } from '../cli.errors';
import { formatEventLine } from '../format/event.format';

const PAGE_SIZE = 1000;

interface LogsOptions {
  follow?: boolean;
  deltas?: boolean;
}

/** Prints each event once, whichever way it came (a page over HTTP or the stream), and remembers whether the run's end was among them. */
interface EventLog {
  print: (event: RawEvent) => void;
  readonly lastSeq: number;
  readonly ended: boolean;
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
        const log = eventLog(ctx, options.deltas === true);
        const api = ctx.api();
        await printPages(ctx, api, runId, log);
        if (options.follow !== true || log.ended) {
          return EXIT.ok;
        }
        // The end event may have been trimmed from the stream: then only the run's status says it is over.
        const { run } = await api.getRun(runId);
        if (isTerminalStatus(run.status)) {
          await printEnded(ctx, api, runId, log, run.status);
          return EXIT.ok;
        }
        await followUntilEnd(ctx, api, runId, log);
        return EXIT.ok;
      }),
    );
}

function eventLog(ctx: CliContext, deltas: boolean): EventLog {
  let lastSeq = 0;
  let ended = false;
  return {
    print: (event) => {
      if (event.seq <= lastSeq) {
        return;
      }
      lastSeq = event.seq;
      ended ||= isTerminalEvent(event);
      if (ctx.json) {
        ctx.line(JSON.stringify(event));
      } else if (deltas || event.type !== 'message.delta') {
        ctx.line(formatEventLine(event));
      }
    },
    get lastSeq() {
      return lastSeq;
    },
    get ended() {
      return ended;
    },
  };
}

async function printPages(ctx: CliContext, api: ApiClient, runId: string, log: EventLog): Promise<void> {
  for (;;) {
    const since = log.lastSeq;
    const page = await api.listEvents(runId, { since, limit: PAGE_SIZE });
    if (page.truncated) {
      ctx.warn(`events of run ${runId} after #${since} were trimmed from the event stream: they are not shown`);
    }
    page.events.forEach(log.print);
    if (page.events.length < PAGE_SIZE) {
      return;
    }
  }
}

/**
 * The run has ended: what is left of its events (it may have ended just after the last page was
 * read), and a note when its end event is not among them (trimmed from the stream).
 */
async function printEnded(ctx: CliContext, api: ApiClient, runId: string, log: EventLog, status: RunStatus): Promise<void> {
  await printPages(ctx, api, runId, log);
  if (!log.ended) {
    ctx.warn(`run ${runId} has ended (${status}); its last events were trimmed from the event stream`);
  }
}

/**
 * Prints live events until the run's end event. The run may end (and that event be trimmed) between
 * the status check and the subscription, so once subscribed the status is checked again: an ended run
 * gets its remaining events over HTTP instead of a wait for an event that may never come.
 */
function followUntilEnd(ctx: CliContext, api: ApiClient, runId: string, log: EventLog): Promise<void> {
  const { baseUrl, token } = ctx.connection();
  return new Promise<void>((resolve, reject) => {
    let checked = false;
    const done = (): void => {
      stream.close();
      resolve();
    };
    const checkAgain = async (): Promise<void> => {
      const { run } = await api.getRun(runId);
      if (log.ended || !isTerminalStatus(run.status)) {
        return;
      }
      await printEnded(ctx, api, runId, log, run.status);
      done();
    };
    const stream: EventStream = new EventStream({
      baseUrl,
      token,
      runId,
      since: log.lastSeq,
      onEvent: (event) => {
        log.print(event);
        if (log.ended) {
          done();
        }
      },
      onNotice: (message) => ctx.warn(message),
      onFatal: reject,
      onSubscribed: () => {
        if (!checked) {
          checked = true;
          checkAgain().catch((error: Error) => {
            stream.close();
            reject(error);
          });
        }
      },
    });
  });
}
