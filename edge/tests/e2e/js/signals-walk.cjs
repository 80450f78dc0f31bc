// The Signals page and a project's Actions page of the admin web UI in a real browser (playwright-core
// driving Debian's chromium), by role and accessible name, with the axe audit on every page: an Admin creates
// a signal endpoint and a token (its secret in the "Secret" field), then an action set from the Actions page
// (switching the flag off when the alert fires), and finds it on the Actions page.
// Run by edge/tests/e2e/ui_signals.rs: at each checkpoint this prints one JSON line {"checkpoint": NAME, ...}
// and waits for a line "continue" on stdin.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser).

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const audit = new Audit();

async function checkpoint(name, detail = {}) {
  process.stdout.write(JSON.stringify({ checkpoint: name, ...detail }) + "\n");
  const answer = await input.next();
  if (answer.done || answer.value.trim() !== "continue") throw new Error(`stopped at ${name}: ${answer.value}`);
}

async function navigate(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  audit.watch(page);

  await page.goto(base + "/login?next=%2Fadmin%2Fsignals");
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await navigate(page, page.getByRole("button", { name: "Sign in" }));
  await page.getByText("No signal endpoints yet.").waitFor();
  await audit.check(page);
  await navigate(page, page.getByRole("link", { name: "New signal endpoint" }));
  await audit.check(page);
  await page.getByLabel("Name").fill("alertmanager");
  await navigate(page, page.getByRole("button", { name: "Create signal endpoint" }));
  await page.getByText("Signal endpoint alertmanager created").waitFor();
  await audit.check(page);
  await page.getByLabel("Name").fill("production alerts");
  await navigate(page, page.getByRole("button", { name: "Create token" }));
  const secret = await page.getByLabel("Secret").inputValue();
  await audit.check(page);
  await checkpoint("token-created", { secret });

  await page.goto(base + "/projects/default/actions");
  await page.getByText("No action sets in this project.").waitFor();
  await audit.check(page);
  await navigate(page, page.getByRole("link", { name: "New action set" }));
  await audit.check(page);
  await page.getByLabel("Name", { exact: true }).fill("Checkout off on critical alerts");
  await page.getByLabel("Path 1").fill("commonLabels.severity");
  await page.getByLabel("Values 1").fill("critical");
  await page.getByLabel("Action 1").selectOption("TOGGLE_FEATURE_OFF");
  await page.getByLabel("Flag 1").fill("checkout");
  await page.getByLabel("Environment 1").fill("production");
  await navigate(page, page.getByRole("button", { name: "Create action set" }));
  await page.getByText("Action set Checkout off on critical alerts created").waitFor();
  await page.getByText("Turn off checkout in production").waitFor();
  await audit.check(page);

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
