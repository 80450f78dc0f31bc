// OpenID Connect sign-in in a real browser (playwright-core driving Debian's chromium) against a real provider
// (js/oidc-provider.mjs: panva's oidc-provider), by role and accessible name. An Admin sets up the provider on
// the "Single sign-on" page and switches password sign-in off; ann (in the provider's group vexil-admins) signs
// in with "Sign in with OpenID Connect" and is created; bob (no group) too; ann signs in again after the test
// took her group away at the provider; a forged callback (unknown state) and a callback whose ID token
// carries another nonce are refused with a page saying why and no session; on a second control plane whose
// provider cannot be reached, single sign-on shows why and the admin token still signs in. Single sign-out:
// bob signs out while it is off and signs in again without the provider asking anything (its session lives
// on); the Admin switches it on; bob signs out through the provider's end_session_endpoint (confirming there)
// and lands on Vexil's sign-in page, and the provider now asks for his login again.
// Run by edge/tests/e2e/ui_oidc.rs: at each checkpoint this prints one JSON line {"checkpoint": NAME, ...}
// and waits for "continue" on stdin. Vexil's pages (never the provider's) are audited by axe-core.
// Screenshots (oidc-*.png, 1280 px and 390 px wide) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL, PROVIDER_URL, UNREACHABLE_URL (the second control plane), ADMIN_TOKEN, CHROMIUM,
// SCREENSHOTS.

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const providerUrl = process.env.PROVIDER_URL;
const unreachable = process.env.UNREACHABLE_URL;
const shots = process.env.SCREENSHOTS;
const vexilOrigin = new URL(base).origin;
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const audit = new Audit();

async function checkpoint(name, detail = {}) {
  process.stdout.write(JSON.stringify({ checkpoint: name, ...detail }) + "\n");
  const answer = await input.next();
  if (answer.done || answer.value.trim() !== "continue") throw new Error(`stopped at ${name}: ${answer.value}`);
}

function fail(message) {
  throw new Error(message);
}

async function shot(page, name) {
  await page.screenshot({ path: `${shots}/oidc-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/oidc-${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

async function navigate(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
}

async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  return context.newPage();
}

async function sessionCookie(page) {
  const cookies = await page.context().cookies(base);
  return cookies.find((cookie) => cookie.name === "vexil-session");
}

// The provider's own development pages: any login and password, then consent when it asks.
async function atProvider(page, login) {
  if (!page.url().startsWith(providerUrl)) fail(`expected the provider's login page, got ${page.url()}`);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await navigate(page, page.getByRole("button", { name: "Sign-in" }));
  if (page.url().startsWith(providerUrl)) {
    await navigate(page, page.getByRole("button", { name: "Continue" }));
  }
}

// "Sign out" in Vexil (the Vexil session ends, wherever the browser goes next).
async function signOut(page) {
  await navigate(page, page.getByRole("button", { name: "Sign out" }));
  if (await sessionCookie(page)) fail("the session cookie outlived the sign-out");
}

// "Sign in with OpenID Connect" with a session at the provider: back in Vexil at once, no login asked.
async function signInAtOnce(page) {
  await page.goto(base + "/login");
  await Promise.all([
    page.waitForURL((url) => url.origin === vexilOrigin && !url.pathname.startsWith("/auth/oidc") && url.pathname !== "/login"),
    page.getByRole("link", { name: "Sign in with OpenID Connect" }).click(),
  ]);
  if (!(await sessionCookie(page))) fail("the provider's session did not sign in at once");
}

// From Vexil's sign-in page through the provider and back.
async function ssoSignIn(page, login) {
  await page.goto(base + "/login");
  await audit.check(page);
  await navigate(page, page.getByRole("link", { name: "Sign in with OpenID Connect" }));
  await atProvider(page, login);
  if (!page.url().startsWith(base)) fail(`${login} did not come back to Vexil: ${page.url()}`);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });

  // The Admin sets up single sign-on.
  const admin = await newPage(browser);
  await admin.goto(base + "/login");
  await admin.getByLabel("Username").fill("root");
  await admin.getByLabel("Password").fill("correct horse battery");
  await navigate(admin, admin.getByRole("button", { name: "Sign in" }));
  await navigate(admin, admin.getByRole("link", { name: "Single sign-on" }));
  const redirectUri = await admin.locator("#redirect-uri").innerText();
  if (redirectUri !== base + "/auth/oidc/callback") fail(`the page shows the redirect URI ${redirectUri}`);
  await audit.check(admin);
  // The SAML section has fields of the same names: the OpenID Connect ones are found in their section.
  const oidc = admin.getByRole("region", { name: "OpenID Connect" });
  await oidc.getByLabel("Enable OpenID Connect sign-in").check();
  await oidc.getByLabel("Discover URL").fill(providerUrl + "/.well-known/openid-configuration");
  await oidc.getByLabel("Client ID").fill("vexil");
  // A refusal first: no secret yet.
  await navigate(admin, admin.getByRole("button", { name: "Save OpenID Connect settings" }));
  await admin.getByText("secret (the client secret) is required").waitFor();
  await audit.check(admin);
  await oidc.getByLabel("Client secret").fill("vexil-secret");
  await oidc.getByLabel("Create users at their first sign-in").check();
  await oidc.getByLabel("Root role of created users").selectOption("Viewer");
  await oidc.getByLabel("Sync group membership from the provider's groups claim").check();
  await oidc.getByLabel("Ask for the groups scope").check();
  await navigate(admin, admin.getByRole("button", { name: "Save OpenID Connect settings" }));
  await admin.getByText("The OpenID Connect settings were saved.").waitFor();
  await admin.getByLabel("Switch off password sign-in").check();
  await navigate(admin, admin.getByRole("button", { name: "Save password sign-in" }));
  await admin.getByRole("status").filter({ hasText: "Password sign-in is off." }).waitFor();
  await shot(admin, "01-settings");
  await checkpoint("configured");

  // ann: created at her first sign-in, a member of the group her provider group maps to.
  const ann = await newPage(browser);
  await ann.goto(base + "/login");
  if ((await ann.getByLabel("Password", { exact: true }).count()) !== 0) fail("the password form is still shown");
  await shot(ann, "02-sign-in");
  await ssoSignIn(ann, "ann");
  if (!/\/personal$/.test(ann.url())) fail(`ann landed on ${ann.url()}`);
  if (!(await sessionCookie(ann))) fail("ann has no session cookie");
  // The group's Admin role: the access pages are hers.
  await navigate(ann, ann.getByRole("link", { name: "Users" }));
  await ann.getByRole("heading", { name: "Users" }).waitFor();
  await shot(ann, "03-ann-users");
  await checkpoint("ann-signed-in");

  // bob: no mapped group, so the default root role (Viewer).
  const bob = await newPage(browser);
  await ssoSignIn(bob, "bob");
  if (!(await sessionCookie(bob))) fail("bob has no session cookie");
  if ((await bob.getByRole("link", { name: "Users" }).count()) !== 0) fail("bob, a Viewer, sees the Users page");
  await audit.check(bob);
  await checkpoint("bob-signed-in");

  // ann again, after the test took her group away at the provider.
  const annAgain = await newPage(browser);
  await ssoSignIn(annAgain, "ann");
  if ((await annAgain.getByRole("link", { name: "Users" }).count()) !== 0) fail("ann kept the group's Admin role");
  await audit.check(annAgain);
  await checkpoint("ann-again");

  // Single sign-out off: signing out of Vexil leaves the provider's session, which signs bob in at once.
  await signOut(bob);
  if (new URL(bob.url()).pathname !== "/login" || new URL(bob.url()).origin !== vexilOrigin) fail(`bob's sign-out went to ${bob.url()}`);
  await signInAtOnce(bob);
  // The Admin switches single sign-out on.
  await navigate(admin, admin.getByRole("link", { name: "Single sign-on" }));
  await oidc.getByLabel("Sign out at the provider too (single sign-out)").check();
  await navigate(admin, admin.getByRole("button", { name: "Save OpenID Connect settings" }));
  await admin.getByText("The OpenID Connect settings were saved.").waitFor();
  await audit.check(admin);
  await checkpoint("single-sign-out-on");
  // bob's session began before: it signs out of Vexil only. His next one keeps its ID token for the provider.
  await signOut(bob);
  if (new URL(bob.url()).origin !== vexilOrigin) fail(`bob's older session's sign-out went to ${bob.url()}`);
  await signInAtOnce(bob);
  // Vexil's page sends the browser on to the provider, which asks for a confirmation.
  await Promise.all([
    bob.waitForURL((url) => url.origin === new URL(providerUrl).origin),
    bob.getByRole("button", { name: "Sign out" }).click(),
  ]);
  if (await sessionCookie(bob)) fail("bob's session cookie outlived the sign-out");
  const endSession = new URL(bob.url());
  for (const name of ["id_token_hint", "client_id", "post_logout_redirect_uri"]) {
    if (!endSession.searchParams.get(name) && !(await bob.locator(`input[name="${name}"]`).count())) {
      fail(`the provider's sign-out page was reached without ${name}: ${bob.url()}`);
    }
  }
  await Promise.all([
    bob.waitForURL((url) => url.origin === vexilOrigin && url.pathname === "/login"),
    bob.getByRole("button", { name: "Yes, sign me out" }).click(),
  ]);
  if (await sessionCookie(bob)) fail("bob's session cookie outlived the sign-out");
  await audit.check(bob);
  // The provider's session is gone: signing in asks for the login again.
  await navigate(bob, bob.getByRole("link", { name: "Sign in with OpenID Connect" }));
  if (!bob.url().startsWith(providerUrl)) fail(`bob's sign-in went to ${bob.url()}`);
  await bob.locator('input[name="login"]').waitFor();
  await checkpoint("signed-out");

  // A forged callback: a state this control plane never gave.
  const forger = await newPage(browser);
  const forged = await forger.goto(base + "/auth/oidc/callback?code=forged-code&state=forged-state");
  if (forged.status() !== 401) fail(`the forged callback answered ${forged.status()}`);
  await forger.getByRole("heading", { name: "Single sign-on failed" }).waitFor();
  await forger.getByText("This sign-in is unknown, was already used or has expired").waitFor();
  if (await sessionCookie(forger)) fail("the forged callback set a session");
  await shot(forger, "04-forged");

  // Another nonce: the authorization request is changed on its way to the provider, whose ID token then
  // carries a nonce this sign-in never made.
  const start = await forger.context().request.get(base + "/auth/oidc/login", { maxRedirects: 0 });
  const location = new URL(start.headers()["location"]);
  location.searchParams.set("nonce", "a-nonce-vexil-never-made");
  await forger.goto(location.toString());
  await atProvider(forger, "mallory");
  await forger.getByRole("heading", { name: "Single sign-on failed" }).waitFor();
  const refusal = await forger.getByRole("alert").innerText();
  if (!/nonce/i.test(refusal)) fail(`the wrong nonce was refused as: ${refusal}`);
  if (await sessionCookie(forger)) fail("the wrong nonce set a session");
  await audit.check(forger);
  await checkpoint("forgeries-refused", { refusal });

  // A control plane whose provider cannot be reached: single sign-on says why, the admin token still works.
  const operator = await newPage(browser);
  await operator.goto(unreachable + "/login");
  await audit.check(operator);
  const down = await Promise.all([
    operator.waitForResponse((response) => response.url().includes("/auth/oidc/login")),
    operator.getByRole("link", { name: "Sign in with OpenID Connect" }).click(),
  ]);
  if (down[0].status() !== 503) fail(`an unreachable provider answered ${down[0].status()}`);
  await operator.getByText("Single sign-on is unavailable").waitFor();
  await shot(operator, "05-provider-down");
  await navigate(operator, operator.getByRole("link", { name: "Back to sign in" }));
  await operator.getByLabel("Admin token").fill(process.env.ADMIN_TOKEN);
  await navigate(operator, operator.getByRole("button", { name: "Sign in", exact: true }));
  if (!/\/projects\/default$/.test(operator.url())) fail(`the admin token landed on ${operator.url()}`);
  await audit.check(operator);

  audit.finish();
  await browser.close();
  await checkpoint("done");
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
    process.exit(1);
  },
);
