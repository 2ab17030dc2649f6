import { loadConfig } from '@parley/platform';
import { createGateway } from './gateway.app';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createGateway(config);
  await app.listen(config.port, config.host);
  console.log(`gateway listening on ${await app.getUrl()}`);
  if (config.usingDevSecret) {
    console.warn('PARLEY_JWT_SECRET is not set: using the development secret; never do this in production');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
