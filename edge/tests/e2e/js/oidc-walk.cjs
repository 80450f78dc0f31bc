// OpenID Connect sign-in in a real browser (playwright-core driving Debian's chromium) against a real provider
// (js/oidc-provider.mjs: panva's oidc-provider), by role and accessible name. An Admin sets up the provider on
// the "Single sign-on" page and switches password sign-in off; ann (in the provider's group vexil-admins) signs
// in with "Sign in with OpenID Connect" and is created; bob (no group) too; ann signs in again after the test
// took her group away at the provider; a forged callback (unknown state) and a callback whose ID token
// carries another nonce are refused with a page saying why and no session; on a second control plane whose
// provider cannot be reached, single sign-on shows why and the admin token still signs in.
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
  if (!/\/projects\/default$/.test(ann.url())) fail(`ann landed on ${ann.url()}`);
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
