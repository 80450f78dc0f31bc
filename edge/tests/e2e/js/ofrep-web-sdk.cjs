// Drives OpenFeature's web SDK (`@openfeature/web-sdk`) with the OFREP web provider
// (`@openfeature/ofrep-web-provider`) in Node, for edge/tests/e2e/changes.rs. Node 20 has `fetch` but no
// `EventSource`: the one `unleash-client` pins (`launchdarkly-eventsource`) stands in for the browser's.
//
// Usage: node ofrep-web-sdk.cjs BASE_URL FRONTEND_TOKEN   (NODE_PATH = .test-deps/node_modules)
// Prints `{"ready":true}` once the provider is ready, then answers each stdin line `{"context"?: {...},
// "flags": [names]}` with `{"results": [{name, boolean, string, number, object}]}`. A line with a context sets
// it first (the provider fetches the bulk evaluation again); one without reads the provider's cache, which
// only the provider's own refresh changes: polling is off, so only its event stream can.
'use strict';
const readline = require('node:readline');
const { EventSource } = require('launchdarkly-eventsource');
globalThis.EventSource = EventSource;
const { OpenFeature } = require('@openfeature/web-sdk');
const { OFREPWebProvider } = require('@openfeature/ofrep-web-provider');

const [baseUrl, token] = process.argv.slice(2);

function reply(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function details(d) {
  return { value: d.value, variant: d.variant ?? null, reason: d.reason ?? null, errorCode: d.errorCode ?? null };
}

async function main() {
  await OpenFeature.setContext({ targetingKey: 'start' });
  await OpenFeature.setProviderAndWait(
    new OFREPWebProvider({
      baseUrl,
      headers: [['Authorization', token]],
      pollInterval: 0,
      changeDetection: 'sse',
      cacheMode: 'disabled',
    }),
  );
  const client = OpenFeature.getClient();
  reply({ ready: true });
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const request = JSON.parse(line);
    if (request.context) {
      await OpenFeature.setContext(request.context);
    }
    const results = request.flags.map((name) => ({
      name,
      boolean: details(client.getBooleanDetails(name, false)),
      string: details(client.getStringDetails(name, '<default>')),
      number: details(client.getNumberDetails(name, -1)),
      object: details(client.getObjectDetails(name, { default: true })),
    }));
    reply({ results });
  }
  await OpenFeature.close();
}

main().catch((error) => {
  reply({ error: String(error) });
  process.exit(1);
});
