// SAML 2.0 sign-in in a real browser (playwright-core driving Debian's chromium) against a real identity
// provider (js/saml-idp.mjs, built with samlify), by role and accessible name. An Admin sets up the provider
// on the "Single sign-on" page (a refusal first: no certificate); ann (in the provider's group vexil-admins)
// signs in with "Sign in with SAML 2.0", typing her address at the provider and pressing Enter, and is created;
// bob (no group) too; ann signs in again after the test took her group away at the provider. Then forged
// responses, each for a sign-in this browser really started, are refused with a page saying why and no
// session: signed with another key, expired, changed after signing, replayed, and one finished in another
// browser than the one that started it (login CSRF). Single logout (the Admin set the provider's logout URL
// and the signing key): with her session at the provider, ann signs in again without typing anything; she
// signs out of Vexil, which signs her out at the provider (a signed LogoutRequest; its LogoutResponse by
// HTTP-Redirect) and shows "You are signed out"; signing in now asks for her address again. A replayed
// and an altered LogoutResponse are refused; a second sign-out is answered by HTTP-POST.
// Run by edge/tests/e2e/ui_saml.rs: at each checkpoint this prints one JSON line {"checkpoint": NAME, ...}
// and waits for "continue" on stdin. Vexil's pages (never the provider's) are audited by axe-core.
// Screenshots (saml-*.png, 1280 px and 390 px wide) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL, IDP_URL, IDP_ENTITY_ID, IDP_SIGN_ON_URL, IDP_CERTIFICATE, IDP_SIGN_OUT_URL, SP_KEY
// (the key that signs sign-out requests), CHROMIUM, SCREENSHOTS.

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const idpUrl = process.env.IDP_URL;
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
  await page.screenshot({ path: `${shots}/saml-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/saml-${name}-390.png`, fullPage: true });
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

// "Sign out" in Vexil: through the provider's single logout and back to the sign-in page, which says so.
async function signOut(page) {
  await Promise.all([
    page.waitForURL((url) => url.origin === vexilOrigin && url.pathname === "/login"),
    page.getByRole("button", { name: "Sign out" }).click(),
  ]);
  await page.getByRole("status").filter({ hasText: "You are signed out." }).waitFor();
  if (await sessionCookie(page)) fail("the session cookie outlived the sign-out");
  await audit.check(page);
}

// From Vexil's sign-in page through the provider's form and back.
async function ssoSignIn(page, email) {
  await page.goto(base + "/login");
  await audit.check(page);
  await navigate(page, page.getByRole("link", { name: "Sign in with SAML 2.0" }));
  if (!page.url().startsWith(idpUrl)) fail(`expected the provider's sign-in page, got ${page.url()}`);
  await page.getByLabel("E-mail").fill(email);
  // Enter submits; the provider's page then posts the response to Vexil by itself.
  await Promise.all([
    page.waitForURL((url) => url.toString().startsWith(base) && !url.pathname.startsWith("/auth/saml")),
    page.getByLabel("E-mail").press("Enter"),
  ]);
}

// A response the provider makes for a sign-in this page's browser started, shaped by `how`, posted to the
// callback as the provider's page would; returns the callback's answer (redirects not followed).
async function forged(page, how) {
  const request = page.context().request;
  const start = await request.get(base + "/auth/saml/login", { maxRedirects: 0 });
  if (start.status() !== 303) fail(`starting a sign-in answered ${start.status()}`);
  const made = await request.post(idpUrl + "/_test/response", {
    data: { email: "mallory@example.com", location: start.headers()["location"], ...how },
  });
  if (!made.ok()) fail(`the provider made no response: ${await made.text()}`);
  const form = await made.json();
  const answer = await request.post(base + "/auth/saml/callback", { form, maxRedirects: 0 });
  return { answer, form };
}

async function refusedWith(page, how, words) {
  const { answer } = await forged(page, how);
  const text = await answer.text();
  if (answer.status() !== 401) fail(`${JSON.stringify(how)} answered ${answer.status()}: ${text}`);
  if (!text.includes(words)) fail(`${JSON.stringify(how)} was refused without "${words}": ${text}`);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });

  // The Admin sets up SAML.
  const admin = await newPage(browser);
  await admin.goto(base + "/login");
  await admin.getByLabel("Username").fill("root");
  await admin.getByLabel("Password").fill("correct horse battery");
  await navigate(admin, admin.getByRole("button", { name: "Sign in" }));
  await navigate(admin, admin.getByRole("link", { name: "Single sign-on" }));
  const acs = await admin.locator("#saml-acs-url").innerText();
  if (acs !== base + "/auth/saml/callback") fail(`the page shows the ACS URL ${acs}`);
  const entity = await admin.locator("#saml-entity-id").innerText();
  if (entity !== base) fail(`the page shows the entity ID ${entity}`);
  // The OpenID Connect section has fields of the same names: the SAML ones are found in their section.
  const saml = admin.getByRole("region", { name: "SAML 2.0" });
  await saml.getByLabel("Enable SAML 2.0 sign-in").check();
  await saml.getByLabel("Identity provider entity ID").fill(process.env.IDP_ENTITY_ID);
  await saml.getByLabel("Single sign-on URL").fill(process.env.IDP_SIGN_ON_URL);
  // A refusal first: no certificate yet; what was typed stays.
  await navigate(admin, admin.getByRole("button", { name: "Save SAML settings" }));
  await admin.getByText("certificate (the identity provider's signing certificate) is required").waitFor();
  if ((await saml.getByLabel("Single sign-on URL").inputValue()) !== process.env.IDP_SIGN_ON_URL) {
    fail("the refused form lost the sign-on URL");
  }
  await shot(admin, "01-refused");
  await saml.getByLabel("Signing certificate").fill(process.env.IDP_CERTIFICATE);
  await saml.getByLabel("Single logout URL").fill(process.env.IDP_SIGN_OUT_URL);
  await saml.getByLabel("Sign-out signing key").fill(process.env.SP_KEY);
  await saml.getByLabel("Create users at their first sign-in").check();
  await saml.getByLabel("Root role of created users").selectOption("Viewer");
  await saml.getByLabel("Sync group membership from the assertion's groups attribute").check();
  await navigate(admin, admin.getByRole("button", { name: "Save SAML settings" }));
  await admin.getByText("The SAML 2.0 settings were saved.").waitFor();
  await shot(admin, "02-settings");
  await checkpoint("configured");

  // ann: created at her first sign-in, a member of the group her provider group maps to.
  const ann = await newPage(browser);
  await ann.goto(base + "/login");
  await shot(ann, "03-sign-in");
  await ssoSignIn(ann, "ann@example.com");
  if (!(await sessionCookie(ann))) fail("ann has no session cookie");
  await navigate(ann, ann.getByRole("link", { name: "Users" }));
  await ann.getByRole("heading", { name: "Users" }).waitFor();
  await audit.check(ann);
  await checkpoint("ann-signed-in");

  // bob: no mapped group, so the default root role (Viewer).
  const bob = await newPage(browser);
  await ssoSignIn(bob, "bob@example.com");
  if (!(await sessionCookie(bob))) fail("bob has no session cookie");
  if ((await bob.getByRole("link", { name: "Users" }).count()) !== 0) fail("bob, a Viewer, sees the Users page");
  await checkpoint("bob-signed-in");

  // ann again, after the test took her group away at the provider.
  const annAgain = await newPage(browser);
  await ssoSignIn(annAgain, "ann@example.com");
  if ((await annAgain.getByRole("link", { name: "Users" }).count()) !== 0) fail("ann kept the group's Admin role");
  await checkpoint("ann-again");

  // Single logout. With her session at the provider, ann's next sign-in asks nothing there.
  await annAgain.goto(base + "/login");
  await Promise.all([
    annAgain.waitForURL((url) => url.origin === vexilOrigin && !url.pathname.startsWith("/auth/saml") && url.pathname !== "/login"),
    annAgain.getByRole("link", { name: "Sign in with SAML 2.0" }).click(),
  ]);
  if (!(await sessionCookie(annAgain))) fail("the provider's session did not sign ann in at once");
  // Signing out of Vexil signs her out at the provider, which answers by HTTP-Redirect.
  const answers = [];
  annAgain.on("request", (request) => {
    if (request.url().includes("/auth/saml/logout/done")) answers.push(request.url());
  });
  await signOut(annAgain);
  if (answers.length !== 1 || !answers[0].includes("Signature=")) fail(`the provider answered ${answers}`);
  await shot(annAgain, "05-signed-out");
  // Signing in again asks for her address at the provider.
  await navigate(annAgain, annAgain.getByRole("link", { name: "Sign in with SAML 2.0" }));
  if (!annAgain.url().startsWith(idpUrl)) fail(`signing in after the sign-out went to ${annAgain.url()}`);
  await annAgain.getByLabel("E-mail").waitFor();
  // The provider's answer, replayed: refused, as is one whose signature was altered.
  const replayed = await annAgain.goto(answers[0]);
  if (replayed.status() !== 401) fail(`a replayed LogoutResponse answered ${replayed.status()}`);
  await annAgain.getByRole("heading", { name: "Sign-out not confirmed" }).waitFor();
  await annAgain.getByText("This sign-out is unknown, was already answered or has expired").waitFor();
  await shot(annAgain, "06-sign-out-replayed");
  const altered = new URL(answers[0]);
  const signature = altered.searchParams.get("Signature");
  altered.searchParams.set("Signature", (signature[0] === "A" ? "B" : "A") + signature.slice(1));
  const forgedAnswer = await annAgain.goto(altered.toString());
  if (forgedAnswer.status() !== 401) fail(`an altered LogoutResponse answered ${forgedAnswer.status()}`);
  await annAgain.getByText("does not verify with the identity provider's certificate").waitFor();
  // Signed in again (typing her address), then out by HTTP-POST.
  await ssoSignIn(annAgain, "ann@example.com");
  const binding = await annAgain.context().request.put(idpUrl + "/_test/slo-binding", { data: { binding: "post" } });
  if (binding.status() !== 204) fail(`the provider's binding could not be set: ${binding.status()}`);
  await signOut(annAgain);
  await navigate(annAgain, annAgain.getByRole("link", { name: "Sign in with SAML 2.0" }));
  await annAgain.getByLabel("E-mail").waitFor();
  await checkpoint("signed-out");

  // Forgeries, each for a sign-in this browser really started.
  const mallory = await newPage(browser);
  await refusedWith(mallory, { otherKey: true }, "did not pass verification");
  await refusedWith(mallory, { expired: true }, "did not pass verification");
  await refusedWith(mallory, { tamperedEmail: "root@example.com" }, "did not pass verification");
  // A genuine response, used once: its replay is refused.
  const { answer: genuine, form } = await forged(mallory, {});
  if (genuine.status() !== 303) fail(`the genuine response answered ${genuine.status()}`);
  const replay = await mallory.context().request.post(base + "/auth/saml/callback", { form, maxRedirects: 0 });
  if (replay.status() !== 401) fail(`the replayed response answered ${replay.status()}`);
  // Login CSRF: the verified sign-in, finished in another browser (a victim's), is refused there.
  const victim = await newPage(browser);
  const crossed = await victim.goto(base + genuine.headers()["location"]);
  if (crossed.status() !== 401) fail(`a sign-in finished in another browser answered ${crossed.status()}`);
  await victim.getByText("This sign-in was not started in this browser").waitFor();
  if (await sessionCookie(victim)) fail("the crossed sign-in set a session");
  if (await sessionCookie(mallory)) fail("a forgery set a session");
  await shot(victim, "04-refused");
  await checkpoint("forgeries-refused");

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
