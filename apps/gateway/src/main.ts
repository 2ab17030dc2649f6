import { devSecretExposure, exitIfShutdownHangs, loadConfig } from '@parley/platform';
import { openOpsPort } from '@parley/store';
import { createGateway } from './gateway.app';

async function main(): Promise<void> {
  const config = loadConfig();
  const exposure = devSecretExposure(config);
  if (exposure !== null) {
    throw new Error(exposure);
  }
  // Before the app, whose start waits for Redis: live at once, so a probe does not restart it meanwhile.
  const ops = await openOpsPort('gateway', config);
  const app = await createGateway(config, ops);
  await app.listen(config.port, config.host).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EADDRINUSE' ? new PortInUseError(`PORT ${config.port} on ${config.host} is already in use (another gateway?): stop it or set PORT to a free port`) : error;
  });
  // Past the grace period and the bounded closes after it, a stopping process exits regardless.
  exitIfShutdownHangs(config.shutdownGraceMs + 30_000);
  console.log(`gateway listening on ${await app.getUrl()}`);
  if (config.usingDevSecret) {
    console.warn('PARLEY_JWT_SECRET is unset or the public development secret: anyone can mint tokens; never do this in production');
  }
}

/** Said in one line: the operator's to fix, not a fault of the code. */
class PortInUseError extends Error {}

main().catch((error: unknown) => {
  console.error(error instanceof PortInUseError ? error.message : error);
  process.exit(1);
});
