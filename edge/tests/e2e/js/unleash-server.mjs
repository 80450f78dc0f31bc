// Starts a real Unleash server (npm `unleash-server`, pinned in scripts/test) for edge/tests/unleash_edge/.
//
// Usage: node unleash-server.mjs POSTGRES_URL DATABASE ADMIN_TOKEN   (NODE_PATH is not read by ES modules: the
// package is imported from .test-deps through UNLEASH_SERVER_MODULE, the path of its entry point)
// Creates DATABASE (dropping an older one of that name) on the server at POSTGRES_URL, starts Unleash on it on a
// free port of 127.0.0.1 with ADMIN_TOKEN as an initial admin API token, and prints `unleash listening on
// PORT` once it answers. Stops (and drops the database) on SIGTERM or when its standard input closes.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [postgresUrl, database, adminToken] = process.argv.slice(2);
const entry = process.env.UNLEASH_SERVER_MODULE;
const require = createRequire(entry);
const pg = require('pg');

const admin = new pg.Client({ connectionString: postgresUrl });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
await admin.query(`CREATE DATABASE "${database}"`);

const target = new URL(postgresUrl);
const { start } = await import(pathToFileURL(entry).href);
const unleash = await start({
  db: {
    host: target.hostname,
    port: Number(target.port || 5432),
    user: decodeURIComponent(target.username || 'postgres'),
    password: decodeURIComponent(target.password || ''),
    database,
    ssl: false,
    pool: { min: 0, max: 8 },
  },
  server: { port: 0, host: '127.0.0.1', enableRequestLogger: false },
  authentication: {
    initApiTokens: [
      { secret: adminToken, type: 'admin', tokenName: 'vexil-test-admin', environment: '*', projects: ['*'] },
    ],
  },
  // The metrics Unleash's edge routes and SDK posts feed are read back at once by the tests.
  getLogger: undefined,
  logLevel: 'error',
  versionCheck: { enable: false },
  disableScheduler: false,
  sendTelemetry: false,
});
const port = unleash.server.address().port;
process.stdout.write(`unleash listening on ${port}\n`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  try {
    await unleash.stop();
  } catch {}
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  } catch {}
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
