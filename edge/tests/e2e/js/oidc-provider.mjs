// A real OpenID Connect provider (panva's npm `oidc-provider`, pinned in scripts/test) for
// edge/tests/e2e/ui_oidc.rs.
//
// Usage: node oidc-provider.mjs REDIRECT_URI POST_LOGOUT_REDIRECT_URI   (ES modules do not read NODE_PATH: the
// package is imported from .test-deps through OIDC_PROVIDER_MODULE, the path of its entry point)
// Listens on a free port of 127.0.0.1 with issuer http://127.0.0.1:PORT, one confidential client
// `vexil` / `vexil-secret` registered for REDIRECT_URI (code flow, PKCE) and, for RP-initiated logout (its
// end_session_endpoint, on by default, which asks "Yes, sign me out"), POST_LOGOUT_REDIRECT_URI; its
// development login and consent pages (any login, any password: the login is the account; a session at the
// provider signs in again without them), and a `groups` scope whose claim, with email and profile, goes into
// the ID token. Prints `oidc provider listening on PORT`.
// Accounts: LOGIN → LOGIN@example.com, named after it, groups as set by
//   PUT /_test/accounts/LOGIN  {"groups": [...]}   (the test changes a person's groups "at the provider").
// Stops when its standard input closes or on SIGTERM.
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const [redirectUri, postLogoutRedirectUri] = process.argv.slice(2);
const { default: Provider } = await import(pathToFileURL(process.env.OIDC_PROVIDER_MODULE).href);

const groups = new Map();

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'vexil',
      client_secret: 'vexil-secret',
      redirect_uris: [redirectUri],
      post_logout_redirect_uris: [postLogoutRedirectUri],
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['openid', 'email', 'profile', 'groups'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
    groups: ['groups'],
  },
  // Every claim of the granted scopes in the ID token (Vexil reads the groups there, as from Okta or Entra).
  conformIdTokenClaims: false,
  async findAccount(ctx, sub) {
    return {
      accountId: sub,
      async claims() {
        return {
          sub,
          email: `${sub}@example.com`,
          email_verified: true,
          name: sub[0].toUpperCase() + sub.slice(1),
          groups: groups.get(sub) ?? [],
        };
      },
    };
  },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
});
provider.proxy = false;

// The test's door: a person's groups at the provider.
provider.use(async (ctx, next) => {
  const match = ctx.path.match(/^\/_test\/accounts\/([^/]+)$/);
  if (!match || ctx.method !== 'PUT') {
    await next();
    return;
  }
  const body = await new Promise((resolve) => {
    let text = '';
    ctx.req.on('data', (chunk) => (text += chunk));
    ctx.req.on('end', () => resolve(text));
  });
  groups.set(decodeURIComponent(match[1]), JSON.parse(body).groups ?? []);
  ctx.status = 204;
});

server.on('request', provider.callback());
process.stdout.write(`oidc provider listening on ${port}\n`);

function stop() {
  server.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
