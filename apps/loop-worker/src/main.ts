import { exitIfShutdownHangs, loadConfig } from '@parley/platform';
import { startLoopWorker } from './loop-worker.app';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await startLoopWorker(config);
  app.enableShutdownHooks();
  // Past the grace period and the bounded closes after it, a stopping process exits regardless.
  exitIfShutdownHangs(config.shutdownGraceMs + 30_000);
  console.log(`loop-worker ready (concurrency ${config.workerConcurrency}, redis ${config.redisUrl})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
