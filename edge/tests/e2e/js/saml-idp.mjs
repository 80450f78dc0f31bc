// A real SAML 2.0 identity provider built with `samlify` (npm, pinned in scripts/test) for
// edge/tests/e2e/ui_saml.rs.
//
// Usage: node saml-idp.mjs SP_ENTITY_ID ACS_URL   (ES modules do not read NODE_PATH: the package is imported
// from .test-deps through SAMLIFY_MODULE, the path of its entry point)
// Makes a fresh RSA key and self-signed certificate (openssl), and another pair for the service provider's
// signed sign-out requests, listens on a free port of 127.0.0.1 with entity ID http://127.0.0.1:PORT/metadata,
// its single sign-on service at /sso and its single logout service at /slo (HTTP-Redirect binding), and prints
//   saml idp ready {"entityId": …, "signOnUrl": …, "signOutUrl": …, "certificate": "-----BEGIN CERTIFICATE-----…",
//                   "spKey": "-----BEGIN PRIVATE KEY-----…"}
// /sso parses the service provider's AuthnRequest and shows a sign-in form (an e-mail address: any address is
// an account), unless the browser has a session at the provider (its idp-session cookie), which answers at
// once; signing in answers with a signed assertion (HTTP-POST binding to ACS_URL): NameID the e-mail
// (emailAddress format), a SessionIndex, the attributes firstName, lastName and groups (one value per group).
// /slo takes the service provider's LogoutRequest, which must be signed with spKey (its certificate is this
// provider's for the service provider), ends the sessions of its NameID and SessionIndex, and answers with a
// signed LogoutResponse to the service provider's single logout service (ACS_URL's …/auth/saml/logout/done):
// HTTP-Redirect binding, or HTTP-POST after PUT /_test/slo-binding {"binding": "post"}.
// Test doors:
//   PUT  /_test/accounts/EMAIL {"groups": [...]}        a person's groups at the provider, from the next sign-in
//   PUT  /_test/slo-binding {"binding": "redirect"|"post"}   how /slo answers
//   POST /_test/response {"email", "location", "expired"?, "otherKey"?, "tamperedEmail"?}
//        → {"SAMLResponse", "RelayState"}: the answer to the AuthnRequest in `location` (the service provider's
//          redirect to /sso) without the sign-in form: signed with this provider's key (or, with otherKey, with
//          a key nobody trusts), its conditions already over with expired, or its NameID changed to
//          tamperedEmail after signing.
// Stops when its standard input closes or on SIGTERM.
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const [spEntityId, acsUrl] = process.argv.slice(2);
const spLogoutUrl = acsUrl.replace(/\/auth\/saml\/callback$/, '/auth/saml/logout/done');
const samlify = await import(pathToFileURL(process.env.SAMLIFY_MODULE).href);
// The AuthnRequest is read, not schema-validated: this is a test provider, and the service provider under
// test (Vexil) is what must be strict.
samlify.setSchemaValidator({ validate: () => Promise.resolve('skipped') });

function keyPair() {
  const dir = mkdtempSync(join(tmpdir(), 'saml-idp-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '2',
      '-subj', '/CN=vexil-test-idp',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const trusted = keyPair();
const untrusted = keyPair();
const spKeys = keyPair();
const groups = new Map();
const flows = new Map();
// Sessions at the provider: id (the idp-session cookie) → {email, indexes: the SessionIndex of each sign-in}.
const sessions = new Map();
let sloBinding = 'redirect';

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;
const base = `http://127.0.0.1:${port}`;
const entityId = `${base}/metadata`;

function identityProvider(keys) {
  return samlify.IdentityProvider({
    entityID: entityId,
    privateKey: keys.key,
    signingCert: keys.cert,
    wantAuthnRequestsSigned: false,
    wantLogoutRequestSigned: true,
    requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    singleSignOnService: [
      { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: `${base}/sso` },
    ],
    singleLogoutService: [
      { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: `${base}/slo` },
    ],
  });
}
const idp = identityProvider(trusted);
const forger = identityProvider(untrusted);
const sp = samlify.ServiceProvider({
  entityID: spEntityId,
  wantAssertionsSigned: true,
  wantLogoutResponseSigned: true,
  signingCert: spKeys.cert,
  assertionConsumerService: [
    { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: acsUrl },
  ],
  singleLogoutService: [
    { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: spLogoutUrl },
    { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: spLogoutUrl },
  ],
});

const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function attribute(name, values) {
  const items = values
    .map((value) => `<saml:AttributeValue xsi:type="xs:string">${escape(value)}</saml:AttributeValue>`)
    .join('');
  return `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${items}</saml:Attribute>`;
}

// The response XML: samlify's template with the times, the subject and the attributes of this sign-in.
function template(email, inResponseTo, expired, sessionIndex) {
  return (context) => {
    const now = new Date();
    const shift = (seconds) => new Date(now.getTime() + seconds * 1000).toISOString();
    const [notBefore, notOnOrAfter] = expired ? [shift(-900), shift(-600)] : [shift(-30), shift(300)];
    const id = `_${randomUUID()}`;
    const login = email.split('@')[0];
    const attributes = [
      attribute('firstName', [login[0].toUpperCase() + login.slice(1)]),
      attribute('lastName', ['Tester']),
      attribute('groups', groups.get(email) ?? []),
    ].join('');
    const values = {
      ID: id,
      AssertionID: `_${randomUUID()}`,
      Destination: acsUrl,
      Audience: spEntityId,
      SubjectRecipient: acsUrl,
      Issuer: entityId,
      IssueInstant: expired ? shift(-900) : now.toISOString(),
      InResponseTo: inResponseTo,
      StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
      NameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      NameID: escape(email),
      ConditionsNotBefore: notBefore,
      ConditionsNotOnOrAfter: notOnOrAfter,
      SubjectConfirmationDataNotOnOrAfter: notOnOrAfter,
      AuthnStatement: `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${sessionIndex}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
      AttributeStatement: `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`,
    };
    return { id, context: context.replace(/\{(\w+)\}/g, (whole, key) => values[key] ?? whole) };
  };
}

async function respond(provider, email, inResponseTo, expired, sessionIndex = `_${randomUUID()}`) {
  const answer = await provider.createLoginResponse(
    sp,
    { extract: { request: { id: inResponseTo } } },
    'post',
    { email },
    { customTagReplacement: template(email, inResponseTo, expired, sessionIndex) },
  );
  return answer.context;
}

// The page that posts a message to the service provider by itself.
function autoPost(res, title, action, fields) {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escape(value)}">`)
    .join('');
  page(res, 200, title,
    `<form method="post" action="${escape(action)}" id="saml">${inputs}<button type="submit">Continue</button></form>` +
    `<script>document.getElementById('saml').submit()</script>`);
}

function sessionOf(req) {
  const cookie = (req.headers.cookie ?? '').split(';').map((part) => part.trim())
    .find((part) => part.startsWith('idp-session='));
  const id = cookie?.slice('idp-session='.length);
  return id && sessions.has(id) ? sessions.get(id) : null;
}

// A sign-in answered: the signed response posted to the service provider, the session (new or the browser's)
// knowing its SessionIndex.
async function signedIn(res, email, flow, session) {
  const sessionIndex = `_${randomUUID()}`;
  const headers = {};
  if (session) {
    session.indexes.add(sessionIndex);
  } else {
    const id = randomUUID();
    sessions.set(id, { email, indexes: new Set([sessionIndex]) });
    headers['set-cookie'] = `idp-session=${id}; Path=/; HttpOnly; SameSite=Lax`;
  }
  const response = await respond(idp, email, flow.requestId, false, sessionIndex);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  autoPost(res, 'Signing you in…', acsUrl, { SAMLResponse: response, RelayState: flow.relayState });
}

// The raw name=value pairs of a query string, as sent: what a redirect binding's signature covers.
function octetString(rawQuery, names) {
  const pairs = rawQuery.split('&');
  return names.map((name) => pairs.find((pair) => pair.split('=')[0] === name)).filter(Boolean).join('&');
}

function page(res, status, title, body) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head>` +
    `<body><main><h1>${escape(title)}</h1>${body}</main></body></html>`);
}

async function readBody(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

server.on('request', async (req, res) => {
  try {
    const url = new URL(req.url, base);
    if (req.method === 'GET' && url.pathname === '/sso') {
      const query = Object.fromEntries(url.searchParams);
      const { extract } = await idp.parseLoginRequest(sp, 'redirect', { query });
      const session = sessionOf(req);
      if (session) {
        await signedIn(res, session.email, { requestId: extract.request.id, relayState: query.RelayState ?? '' }, session);
        return;
      }
      const flow = randomUUID();
      flows.set(flow, { requestId: extract.request.id, relayState: query.RelayState ?? '' });
      page(res, 200, 'Test identity provider: sign in',
        `<form method="post" action="/sso/login"><input type="hidden" name="flow" value="${flow}">` +
        `<label for="email">E-mail</label> <input id="email" name="email" type="email" autocomplete="username">` +
        ` <button type="submit">Sign in</button></form>`);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/sso/login') {
      const form = new URLSearchParams(await readBody(req));
      const flow = flows.get(form.get('flow'));
      flows.delete(form.get('flow'));
      if (!flow) {
        page(res, 400, 'Unknown sign-in', '<p>Start again from the service provider.</p>');
        return;
      }
      await signedIn(res, form.get('email'), flow, null);
      return;
    }
    if (req.method === 'GET' && url.pathname === '/slo') {
      const query = Object.fromEntries(url.searchParams);
      const raw = req.url.split('?')[1] ?? '';
      const { extract } = await idp.parseLogoutRequest(sp, 'redirect', {
        query,
        octetString: octetString(raw, ['SAMLRequest', 'RelayState', 'SigAlg']),
      });
      const indexes = [extract.sessionIndex].flat().filter(Boolean);
      for (const [id, session] of sessions) {
        if (session.email === extract.nameID && (indexes.length === 0 || indexes.some((index) => session.indexes.has(index)))) {
          sessions.delete(id);
        }
      }
      res.setHeader('set-cookie', 'idp-session=; Path=/; Max-Age=0');
      const answered = { extract: { request: { id: extract.request.id } } };
      if (sloBinding === 'post') {
        const response = idp.createLogoutResponse(sp, answered, 'post', query.RelayState ?? '');
        const fields = { SAMLResponse: response.context };
        if (query.RelayState) fields.RelayState = query.RelayState;
        autoPost(res, 'Signing you out…', spLogoutUrl, fields);
      } else {
        const response = idp.createLogoutResponse(sp, answered, 'redirect', query.RelayState ?? '');
        res.writeHead(302, { location: response.context }).end();
      }
      return;
    }
    if (req.method === 'PUT' && url.pathname === '/_test/slo-binding') {
      sloBinding = JSON.parse(await readBody(req)).binding;
      res.writeHead(204).end();
      return;
    }
    const account = url.pathname.match(/^\/_test\/accounts\/([^/]+)$/);
    if (req.method === 'PUT' && account) {
      groups.set(decodeURIComponent(account[1]), JSON.parse(await readBody(req)).groups ?? []);
      res.writeHead(204).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/_test/response') {
      const input = JSON.parse(await readBody(req));
      const query = Object.fromEntries(new URL(input.location).searchParams);
      const { extract } = await idp.parseLoginRequest(sp, 'redirect', { query });
      let response = await respond(input.otherKey ? forger : idp, input.email, extract.request.id, !!input.expired);
      if (input.tamperedEmail) {
        const xml = Buffer.from(response, 'base64').toString('utf8');
        const changed = xml.replace(`>${escape(input.email)}</saml:NameID>`, `>${escape(input.tamperedEmail)}</saml:NameID>`);
        if (changed === xml) throw new Error('nothing to tamper with');
        response = Buffer.from(changed, 'utf8').toString('base64');
      }
      res.writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ SAMLResponse: response, RelayState: query.RelayState ?? '' }));
      return;
    }
    res.writeHead(404).end();
  } catch (error) {
    page(res, 400, 'The identity provider could not read the request', `<p>${escape(error.message ?? error)}</p>`);
  }
});

process.stdout.write(`saml idp ready ${JSON.stringify({
  entityId, signOnUrl: `${base}/sso`, signOutUrl: `${base}/slo`, certificate: trusted.cert, spKey: spKeys.key,
})}\n`);

function stop() {
  server.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
