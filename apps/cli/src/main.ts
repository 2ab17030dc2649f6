#!/usr/bin/env node
import { runCli } from './cli.program';
import { exitQuietlyWhenPipeCloses } from './closed-pipe';

exitQuietlyWhenPipeCloses([process.stdout, process.stderr], (code) => process.exit(code));

void runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
}).then((code) => {
  process.exitCode = code;
  // Everything should be closed by now; this only guards against a stray handle keeping us alive.
  setTimeout(() => process.exit(code), 1000).unref();
});
