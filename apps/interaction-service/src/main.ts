import { loadConfig } from '@parley/platform';
import { startInteractionService } from './interaction-service.app';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await startInteractionService(config);
  app.enableShutdownHooks();
  console.log(`interaction-service ready (redis ${config.redisUrl})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
