import { exitIfShutdownHangs, loadConfig } from '@parley/platform';
import { startInteractionService } from './interaction-service.app';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await startInteractionService(config);
  app.enableShutdownHooks();
  // Past the grace period and the bounded closes after it, a stopping process exits regardless.
  exitIfShutdownHangs(config.shutdownGraceMs + 30_000);
  console.log(`interaction-service ready (redis ${config.redisUrl})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
