// A real SAML 2.0 identity provider built with `samlify` (npm, pinned in scripts/test) for
// edge/tests/e2e/ui_saml.rs.
//
// Usage: node saml-idp.mjs SP_ENTITY_ID ACS_URL   (ES modules do not read NODE_PATH: the package is imported
// from .test-deps through SAMLIFY_MODULE, the path of its entry point)
// Makes a fresh RSA key and self-signed certificate (openssl), listens on a free port of 127.0.0.1 with entity
// ID http://127.0.0.1:PORT/metadata and its single sign-on service at /sso (HTTP-Redirect binding), and prints
//   saml idp ready {"entityId": …, "signOnUrl": …, "certificate": "-----BEGIN CERTIFICATE-----…"}
// /sso parses the service provider's AuthnRequest and shows a sign-in form (an e-mail address: any address is
// an account); signing in answers with a signed assertion (HTTP-POST binding to ACS_URL): NameID the e-mail
// (emailAddress format), the attributes firstName, lastName and groups (one value per group).
// Test doors:
//   PUT  /_test/accounts/EMAIL {"groups": [...]}        a person's groups at the provider, from the next sign-in
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
const groups = new Map();
const flows = new Map();

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
    singleSignOnService: [
      { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: `${base}/sso` },
    ],
  });
}
const idp = identityProvider(trusted);
const forger = identityProvider(untrusted);
const sp = samlify.ServiceProvider({
  entityID: spEntityId,
  wantAssertionsSigned: true,
  assertionConsumerService: [
    { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: acsUrl },
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
function template(email, inResponseTo, expired) {
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
      AuthnStatement: `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${id}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
      AttributeStatement: `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`,
    };
    return { id, context: context.replace(/\{(\w+)\}/g, (whole, key) => values[key] ?? whole) };
  };
}

async function respond(provider, email, inResponseTo, expired) {
  const answer = await provider.createLoginResponse(
    sp,
    { extract: { request: { id: inResponseTo } } },
    'post',
    { email },
    { customTagReplacement: template(email, inResponseTo, expired) },
  );
  return answer.context;
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
      const response = await respond(idp, form.get('email'), flow.requestId, false);
      page(res, 200, 'Signing you in…',
        `<form method="post" action="${escape(acsUrl)}" id="saml">` +
        `<input type="hidden" name="SAMLResponse" value="${escape(response)}">` +
        `<input type="hidden" name="RelayState" value="${escape(flow.relayState)}">` +
        `<button type="submit">Continue</button></form>` +
        `<script>document.getElementById('saml').submit()</script>`);
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

process.stdout.write(`saml idp ready ${JSON.stringify({ entityId, signOnUrl: `${base}/sso`, certificate: trusted.cert })}\n`);

function stop() {
  server.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
