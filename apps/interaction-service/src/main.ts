import { exitIfShutdownHangs, loadConfig, redactUrl, setClusterGaugeSource } from '@parley/platform';
import { openOpsPort } from '@parley/store';
import { startInteractionService } from './interaction-service.app';

async function main(): Promise<void> {
  const config = loadConfig();
  // Before the app, whose start waits for Redis: live at once, so a probe does not restart it meanwhile.
  // Until the app reports them, the deployment-wide gauges are unknown (NaN), not 0.
  setClusterGaugeSource(() => Promise.reject(new Error('starting: waiting for Redis')));
  const ops = await openOpsPort('interaction-service', config);
  const app = await startInteractionService(config, ops);
  app.enableShutdownHooks();
  // Past the grace period and the bounded closes after it, a stopping process exits regardless.
  exitIfShutdownHangs(config.shutdownGraceMs + 30_000);
  console.log(`interaction-service ready (redis ${redactUrl(config.redisUrl)})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
