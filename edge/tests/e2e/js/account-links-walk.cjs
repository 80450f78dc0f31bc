// Invite links and password reset in the admin web UI, in a real browser (playwright-core driving Debian's
// chromium), by role and accessible name, typing and pressing Enter, with the axe audit on every page:
// an Admin finds the empty Invite links page, makes a link (an expiry in the past is refused, the error beside
// the field), copies it; a new person opens it in a browser of their own, signs up, and lands on the sign-in
// page; they ask "Forgot password?", follow the e-mailed link (the test finds it in the SMTP server's mail and
// writes it to $LINK_FILE), are refused a confirmation that does not match, set the password and sign in with
// it; the Admin e-mails them a reset link from their user's page.
// Run by edge/tests/e2e/ui_account_links.rs: at each checkpoint this prints one JSON line
// {"checkpoint": NAME, ...} and waits for a line "continue" on stdin. Screenshots (account-links-*.png: 1280 and
// 390 px wide, light and dark) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder), LINK_FILE.

const { chromium } = require("playwright-core");
const fs = require("node:fs");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
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

// The page at 1280 and 390 px, light and dark; then the audit.
async function shot(page, name) {
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    const suffix = scheme === "dark" ? "-dark" : "";
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: `${shots}/account-links-${name}-1280${suffix}.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${shots}/account-links-${name}-390${suffix}.png`, fullPage: true });
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

// Presses Enter in a field (the form's submit) and waits for the page that answers.
async function enter(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.press("Enter")]);
}

// Clicks something that loads a page and waits for it.
async function navigate(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
}

async function newTab(browser, errors, expected) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const page = await context.newPage();
  audit.watch(page);
  page.on("console", (message) => {
    if (message.type() === "error" && !/\b40[01]\b/.test(message.text())) errors.push(message.text());
  });
  page.on("response", (response) => {
    // The refusals the walk provokes are 400s to its form posts.
    const refused = response.status() === 400 && response.request().method() === "POST";
    if (response.status() >= 400 && !refused && !expected(response)) errors.push(`${response.status()} ${response.url()}`);
  });
  return page;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const errors = [];
  const page = await newTab(browser, errors, () => false);

  // The Admin signs in, typing and pressing Enter.
  await page.goto(base + "/login?next=%2F");
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await enter(page, page.getByLabel("Password"));
  await audit.check(page);

  // Admin → Invite links: the empty list says what a link is for.
  await navigate(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Invite links" }));
  await page.getByRole("heading", { name: "Invite links", level: 1 }).waitFor();
  await page.getByText("No invite links yet.").waitFor();
  await shot(page, "01-empty");

  // A new link: an expiry in the past is refused beside its field, what was typed kept.
  await navigate(page, page.getByRole("link", { name: "New invite link" }));
  await audit.check(page);
  await page.getByLabel("Name").fill("Design team");
  await page.getByLabel("Root role").selectOption({ label: "Editor" });
  await page.getByLabel("Expires on").fill("2001-01-01");
  await enter(page, page.getByLabel("Name"));
  const expiry = page.getByLabel("Expires on");
  if ((await expiry.getAttribute("aria-invalid")) !== "true") fail("the refused expiry is not marked invalid");
  await page.getByText("must be in the future").first().waitFor();
  if ((await page.getByLabel("Name").inputValue()) !== "Design team") fail("the form lost the name");
  await shot(page, "02-refused");
  const nextMonth = new Date(Date.now() + 30 * 86400000).toISOString().slice(0, 10);
  await expiry.fill(nextMonth);
  await enter(page, page.getByLabel("Name"));
  await page.getByRole("heading", { name: "Invite link “Design team” created" }).waitFor();
  const linkField = page.getByLabel("Invite link", { exact: true });
  if ((await linkField.getAttribute("readonly")) === null) fail("the link field is not read-only");
  const link = await linkField.inputValue();
  await page.getByRole("button", { name: "Copy" }).focus();
  await page.keyboard.press("Enter");
  await page.getByText("Copied to the clipboard.").waitFor();
  if ((await page.evaluate(() => navigator.clipboard.readText())) !== link) fail("Copy did not copy the link");
  await shot(page, "03-created");
  await checkpoint("invite-created", { link });

  // The new person, in a browser of their own: the sign-up page at the link.
  const visitor = await newTab(browser, errors, (response) => response.status() === 401 && response.url().includes("/login"));
  await visitor.goto(link);
  await visitor.getByRole("heading", { name: "Join Vexil" }).waitFor();
  await visitor.getByLabel("Email").fill("mia@example.com");
  await visitor.getByLabel("Name").fill("Mia");
  await visitor.getByLabel("Password").fill("short");
  // The browser's own check (minlength) stops a short password before it is sent: the page says so.
  await visitor.getByLabel("Password").press("Enter");
  if (await visitor.evaluate(() => document.querySelector("#signup-password").validity.valid)) fail("a short password passed");
  await visitor.getByLabel("Password").fill("design all day");
  await shot(visitor, "04-sign-up");
  await enter(visitor, visitor.getByLabel("Password"));
  await visitor.getByText("Your account was created").waitFor();
  await shot(visitor, "05-signed-up");
  await checkpoint("signed-up");

  // "Forgot password?" on the sign-in page: the e-mail form, then the same answer whoever asks.
  await navigate(visitor, visitor.getByRole("link", { name: "Forgot password?" }));
  await visitor.getByRole("heading", { name: "Forgot your password?" }).waitFor();
  await visitor.getByLabel("Email").fill("mia@example.com");
  await shot(visitor, "06-forgot");
  await enter(visitor, visitor.getByLabel("Email"));
  await visitor.getByText("If an account has the e-mail mia@example.com").waitFor();
  await audit.check(visitor);
  await checkpoint("reset-asked");

  // The e-mailed link: a confirmation that does not match is refused; then the password is set.
  const resetLink = fs.readFileSync(process.env.LINK_FILE, "utf8").trim();
  await visitor.goto(resetLink);
  await visitor.getByRole("heading", { name: "Choose a new password" }).waitFor();
  await visitor.getByLabel("New password", { exact: true }).fill("brand new password");
  await visitor.getByLabel("Confirm password", { exact: true }).fill("brand new passwort");
  await enter(visitor, visitor.getByLabel("Confirm password", { exact: true }));
  await visitor.getByText("does not match").first().waitFor();
  if ((await visitor.getByLabel("Confirm password", { exact: true }).getAttribute("aria-invalid")) !== "true")
    fail("the refused confirmation is not marked invalid");
  await shot(visitor, "07-reset-refused");
  await visitor.getByLabel("New password", { exact: true }).fill("brand new password");
  await visitor.getByLabel("Confirm password", { exact: true }).fill("brand new password");
  await enter(visitor, visitor.getByLabel("Confirm password", { exact: true }));
  await visitor.getByText("Your password was set").waitFor();
  await audit.check(visitor);
  await visitor.getByLabel("Username").fill("mia@example.com");
  await visitor.getByLabel("Password").fill("brand new password");
  await enter(visitor, visitor.getByLabel("Password"));
  if (new URL(visitor.url()).pathname === "/login") fail("the new password did not sign in");
  await audit.check(visitor);
  await checkpoint("reset-done");

  // The Admin: the link is listed as used; from Mia's page, a reset link by e-mail.
  await page.goto(base + "/admin/invite-links");
  await page.getByRole("cell", { name: "Used" }).waitFor();
  await audit.check(page);
  await navigate(page, page.getByRole("link", { name: "mia@example.com" }));
  await page.getByRole("heading", { name: "Mia", level: 1 }).waitFor();
  await audit.check(page);
  await navigate(page, page.getByRole("button", { name: "E-mail a reset link" }));
  await page.getByText("A reset link was e-mailed to mia@example.com").waitFor();
  await shot(page, "08-admin-reset");
  await checkpoint("admin-reset");

  if (errors.length > 0) fail(`errors: ${errors.join("; ")}`);
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
