// Drives OpenFeature's server SDK (`@openfeature/server-sdk`) with the OFREP provider
// (`@openfeature/ofrep-provider`) for edge/tests/e2e/changes.rs.
//
// Usage: node ofrep-sdk.cjs BASE_URL TOKEN   (BASE_URL: the server's root, the provider adds /ofrep/v1/...;
// NODE_PATH = .test-deps/node_modules)
// Prints `{"ready":true}` once the provider is ready, then answers each stdin line `{"context": {...},
// "flags": [names]}` with `{"results": [{name, boolean, string, number, object}]}`: each the details
// (`value`, `variant`, `reason`, `errorCode`) of that typed evaluation, with defaults no answer gives.
'use strict';
const readline = require('node:readline');
const { OpenFeature } = require('@openfeature/server-sdk');
const { OFREPProvider } = require('@openfeature/ofrep-provider');

const [baseUrl, token] = process.argv.slice(2);

function reply(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function details(d) {
  return { value: d.value, variant: d.variant ?? null, reason: d.reason ?? null, errorCode: d.errorCode ?? null };
}

async function main() {
  await OpenFeature.setProviderAndWait(
    new OFREPProvider({ baseUrl, headers: [['Authorization', `Bearer ${token}`]] }),
  );
  const client = OpenFeature.getClient();
  reply({ ready: true });
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const request = JSON.parse(line);
    const context = request.context ?? {};
    const results = [];
    for (const name of request.flags) {
      results.push({
        name,
        boolean: details(await client.getBooleanDetails(name, false, context)),
        string: details(await client.getStringDetails(name, '<default>', context)),
        number: details(await client.getNumberDetails(name, -1, context)),
        object: details(await client.getObjectDetails(name, { default: true }, context)),
      });
    }
    reply({ results });
  }
  await OpenFeature.close();
}

main().catch((error) => {
  reply({ error: String(error) });
  process.exit(1);
});
