// Drives the server SDK `unleash-client` (Node) for edge/tests/e2e/sdk.rs.
//
// Usage: node server-sdk.cjs API_URL CLIENT_TOKEN REFRESH_MS [METRICS_MS] [MODE]   (API_URL ends in /api;
// NODE_PATH = .test-deps/node_modules; no METRICS_MS, or 0: the SDK neither registers nor sends metrics; MODE:
// `full` (default: polling /client/features), `delta` (polling /client/delta) or `streaming`
// (/client/streaming), the SDK's `experimentalMode`)
// Prints `{"ready":true}` once the SDK has synchronized with the server, then answers each stdin line
// `{"context"?: {...}, "flags": [names]}` with `{"context": <the context the SDK evaluated: its static
// appName and environment plus the given one (or the previous one)>, "results": [{name, enabled, variant}]}`.
// The SDK evaluates locally, from the document its own refresh timer last fetched (or its stream last
// delivered). Each answer also carries `unchanged`: how many polls the server answered 304 so far.
'use strict';
const readline = require('node:readline');
const { initialize, InMemStorageProvider } = require('unleash-client');

const [url, token, refreshMs, metricsMs = '0', mode = 'full'] = process.argv.slice(2);
const experimentalMode = {
  full: { type: 'polling', format: 'full' },
  delta: { type: 'polling', format: 'delta' },
  streaming: { type: 'streaming' },
}[mode];
const appName = 'vexil-sdk-test-server';
const environment = 'development';

function reply(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

const client = initialize({
  url,
  appName,
  environment,
  customHeaders: { Authorization: token },
  refreshInterval: Number(refreshMs),
  disableMetrics: Number(metricsMs) === 0,
  metricsInterval: Number(metricsMs),
  storageProvider: new InMemStorageProvider(),
  experimentalMode,
});
let unchanged = 0;
client.on('unchanged', () => {
  unchanged += 1;
});
client.on('error', (error) => process.stderr.write(`unleash-client error: ${error}\n`));
client.on('warn', (warning) => process.stderr.write(`unleash-client warning: ${warning}\n`));

const started = setTimeout(() => {
  reply({ error: 'unleash-client did not synchronize within 20 s' });
  process.exit(1);
}, 20000);

client.once('synchronized', async () => {
  clearTimeout(started);
  reply({ ready: true });
  const lines = readline.createInterface({ input: process.stdin });
  let context = {};
  for await (const line of lines) {
    const request = JSON.parse(line);
    context = request.context ?? context;
    const results = request.flags.map((name) => ({
      name,
      enabled: client.isEnabled(name, context),
      variant: client.getVariant(name, context),
    }));
    reply({ context: { appName, environment, ...context }, results, unchanged });
  }
  client.destroy();
});
