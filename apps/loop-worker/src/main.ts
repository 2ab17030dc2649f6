import { exitIfShutdownHangs, loadConfig, redactUrl } from '@parley/platform';
import { openOpsPort } from '@parley/store';
import { toolsInFlight } from '@parley/tools';
import { startLoopWorker } from './loop-worker.app';

async function main(): Promise<void> {
  const config = loadConfig();
  // Before the app, whose start waits for Redis: live at once, so a probe does not restart it meanwhile.
  const ops = await openOpsPort('loop-worker', config);
  const app = await startLoopWorker(config, ops);
  app.enableShutdownHooks();
  // Past the grace period and the bounded closes after it (or past its tool calls' timeouts, which
  // it waits for), a stopping process exits regardless, killing what its shell commands left.
  exitIfShutdownHangs(config.shutdownGraceMs + 30_000, { holdUntil: () => toolsInFlight.lastDeadline() });
  process.once('exit', () => toolsInFlight.killGroups());
  console.log(`loop-worker ready (concurrency ${config.workerConcurrency}, redis ${redactUrl(config.redisUrl)})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
