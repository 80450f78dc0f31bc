// Drives the browser SDK `unleash-proxy-client` in Node for edge/tests/e2e/sdk.rs.
//
// Usage: node frontend-sdk.cjs URL FRONTEND_TOKEN REFRESH_SECONDS [METRICS_SECONDS]
// (NODE_PATH = .test-deps/node_modules; no METRICS_SECONDS, or 0: the SDK sends no metrics)
// Prints `{"ready":true}` once the first fetch succeeded, then answers each stdin line
// `{"context"?: {...}, "flags": [names]}` with `{"context": <the SDK's context>, "results": [{name, enabled,
// variant}]}`. With a context the SDK switches to it (`updateContext`, which fetches); without one it answers
// from what its own refresh timer last fetched.
'use strict';
const readline = require('node:readline');
const { UnleashClient, InMemoryStorageProvider } = require('unleash-proxy-client');

const [url, clientKey, refreshSeconds, metricsSeconds = '0'] = process.argv.slice(2);
const client = new UnleashClient({
  url,
  clientKey,
  appName: 'vexil-sdk-test-frontend',
  refreshInterval: Number(refreshSeconds),
  disableMetrics: Number(metricsSeconds) === 0,
  metricsInterval: Number(metricsSeconds),
  metricsIntervalInitial: Number(metricsSeconds),
  storageProvider: new InMemoryStorageProvider(),
  fetch,
});

function reply(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function main() {
  client.on('error', (error) => process.stderr.write(`unleash-proxy-client error: ${error}\n`));
  await client.start();
  if (!client.isReady()) {
    reply({ error: `no first fetch: ${client.getError()}` });
    process.exit(1);
  }
  reply({ ready: true });
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const request = JSON.parse(line);
    if (request.context) {
      await client.updateContext(request.context);
    }
    const results = request.flags.map((name) => ({
      name,
      enabled: client.isEnabled(name),
      variant: client.getVariant(name),
    }));
    reply({ context: client.getContext(), results, error: client.getError() ?? null });
  }
  client.stop();
}

main().catch((error) => {
  reply({ error: String(error && error.stack ? error.stack : error) });
  process.exit(1);
});
