import { Command, CommanderError } from 'commander';
import { CliContext, type ActionFactory, type CliIo, type GlobalOptions } from './cli.context';
import { EXIT, UsageError } from './cli.errors';
import { errorMessage } from './errors.describe';
import { escapeControls } from './format/text';
import { registerAgentsCommand } from './commands/agents.command';
import { registerApprovalsCommand } from './commands/approvals.command';
import { registerAuditCommand } from './commands/audit.command';
import { registerLogsCommand } from './commands/logs.command';
import { registerMsgCommand } from './commands/msg.command';
import { registerPsCommand } from './commands/ps.command';
import { registerRespondCommand } from './commands/respond.command';
import { registerRunCommand } from './commands/run.command';
import { registerSchedulesCommand } from './commands/schedules.command';
import { registerStopCommand } from './commands/stop.command';
import { registerTokenCommand } from './commands/token.command';

export type { CliIo } from './cli.context';

const VERSION = '0.1.0';

/**
 * Runs the CLI in-process. `argv` holds the user's arguments only (process.argv.slice(2)).
 * Resolves with the exit code: 0 ok, 1 error (the gateway's message on stderr), 2 usage error,
 * 130 interrupted. Never rejects and never exits the process.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    return reportError(error, io);
  }
}

/** A fresh program per invocation: commander keeps parsed values on the command objects. */
export function buildProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command('parley')
    .description('Start Parley agent runs, follow them, and answer their questions.')
    .version(VERSION)
    .option('--json', 'machine-readable output')
    .option('--url <url>', 'gateway URL (env PARLEY_URL, default http://127.0.0.1:8080)')
    .option('--token <jwt>', 'bearer token (env PARLEY_TOKEN; default: a dev token signed with PARLEY_JWT_SECRET)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .configureHelp({ showGlobalOptions: true });

  const action: ActionFactory = (handler) => async (...args) => {
    const cmd = args[args.length - 1] as Command;
    const ctx = new CliContext(io, cmd.optsWithGlobals<GlobalOptions>());
    setExitCode(await handler(ctx, cmd));
  };

  registerRunCommand(program, action);
  registerPsCommand(program, action);
  registerRespondCommand(program, action);
  registerApprovalsCommand(program, action);
  registerAuditCommand(program, action);
  registerLogsCommand(program, action);
  registerMsgCommand(program, action);
  registerStopCommand(program, action);
  registerAgentsCommand(program, action);
  registerSchedulesCommand(program, action);
  registerTokenCommand(program, action);
  return program;
}

function reportError(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // commander has already printed its message (or the help).
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  io.stderr.write(`error: ${escapeControls(errorMessage(error))}\n`);
  return error instanceof UsageError ? EXIT.usage : EXIT.error;
}
