// The service accounts page of the admin web UI in a real browser (playwright-core driving Debian's chromium),
// by role and accessible name, with the axe audit on every page: an Admin finds the empty list's guidance,
// creates a service account (a username with a space is refused and the form drawn again with the error
// beside the field), creates a token and reads its secret from the "Secret" field (copied by the Copy
// button), deletes that token, creates a second one and deletes the account after the confirmation page.
// Run by edge/tests/e2e/ui_service_accounts.rs: at each checkpoint this prints one JSON line
// {"checkpoint": NAME, ...} and waits for a line "continue" on stdin while the test uses the secret against
// the admin API. Screenshots (service-accounts-*.png, 1280 px and 390 px wide) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder).

const { chromium } = require("playwright-core");
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

async function shot(page, name) {
  await page.screenshot({ path: `${shots}/service-accounts-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/service-accounts-${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

// Clicks something that loads a page and waits for it.
async function navigate(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
}

async function createToken(page, description) {
  await page.getByLabel("Description").fill(description);
  const nextYear = new Date(Date.now() + 365 * 86400000).toISOString().slice(0, 10);
  await page.getByLabel("Expires on").fill(nextYear);
  await navigate(page, page.getByRole("button", { name: "Create token" }));
  const secretField = page.getByLabel("Secret");
  if ((await secretField.getAttribute("readonly")) === null) fail("the Secret field is not read-only");
  const secret = await secretField.inputValue();
  if (!secret.startsWith("user:")) fail(`unexpected secret ${secret}`);
  return secret;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const errors = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const page = await context.newPage();
  audit.watch(page);
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().includes("400")) errors.push(message.text());
  });
  page.on("response", (response) => {
    // The refused username is the one 400 the walk expects.
    if (response.status() >= 400 && !(response.status() === 400 && response.request().method() === "POST"))
      errors.push(`${response.status()} ${response.url()}`);
  });

  await page.goto(base + "/login?next=%2F");
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await navigate(page, page.getByRole("button", { name: "Sign in" }));
  await audit.check(page);

  // The Admin navigation links the page; the empty list says what a service account is for.
  await navigate(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Service accounts" }));
  await page.getByRole("heading", { name: "Service accounts", level: 1 }).waitFor();
  await page.getByText("No service accounts yet.").waitFor();
  await shot(page, "01-empty");

  // A username with a space is refused, the form drawn again with what was typed and the error at the field.
  await navigate(page, page.getByRole("link", { name: "New service account" }));
  await audit.check(page);
  await page.getByLabel("Username").fill("ci bot");
  await page.getByLabel("Name", { exact: true }).fill("CI bot");
  await page.getByLabel("Root role").selectOption({ label: "Editor" });
  await navigate(page, page.getByRole("button", { name: "Create service account" }));
  const username = page.getByLabel("Username");
  if ((await username.getAttribute("aria-invalid")) !== "true") fail("the refused username is not marked invalid");
  await page.getByText("without spaces").first().waitFor();
  if ((await page.getByLabel("Name", { exact: true }).inputValue()) !== "CI bot") fail("the form lost the name");
  await shot(page, "02-refused");
  await username.fill("ci-bot");
  await navigate(page, page.getByRole("button", { name: "Create service account" }));
  await page.getByText("Service account ci-bot created").waitFor();
  const accountUrl = page.url();
  if (!/\/admin\/service-accounts\/\d+$/.test(accountUrl)) fail(`after the create: ${accountUrl}`);
  await page.getByText("No tokens yet").waitFor();
  await audit.check(page);

  // A token: the secret once, copied by the Copy button.
  const secret = await createToken(page, "pipeline");
  await page.getByRole("button", { name: "Copy" }).focus();
  await page.keyboard.press("Enter");
  await page.getByText("Copied to the clipboard.").waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  if (copied !== secret) fail("Copy did not put the secret on the clipboard");
  await shot(page, "03-token-created");
  await checkpoint("token-created", { secret });

  // The page again: the token listed, its secret not; deleting it ends it.
  await page.goto(accountUrl);
  if ((await page.content()).includes(secret)) fail("the page shows the secret again");
  await navigate(page, page.getByRole("button", { name: "Delete token pipeline" }));
  await page.getByText("The token was deleted").waitFor();
  await checkpoint("token-deleted", { secret });

  // A second token, then the account goes with it after the confirmation.
  const second = await createToken(page, "second");
  await page.goto(base + "/admin/service-accounts");
  await page.getByRole("cell", { name: "CI bot", exact: true }).waitFor();
  await shot(page, "04-list");
  await navigate(page, page.getByRole("link", { name: "Manage CI bot" }));
  await navigate(page, page.getByRole("link", { name: "Delete service account" }));
  await page.getByRole("heading", { name: "Delete CI bot?" }).waitFor();
  await audit.check(page);
  await navigate(page, page.getByRole("button", { name: "Confirm delete" }));
  await page.getByText("The service account was deleted").waitFor();
  await page.getByText("No service accounts yet.").waitFor();
  await checkpoint("account-deleted", { secret: second });

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
