// SCIM provisioning in the admin web UI in a real browser (playwright-core driving Debian's chromium), by role
// and accessible name, with the axe audit on every page: an Admin opens Admin → SCIM provisioning, finds the
// base URL to give the identity provider, switches provisioning on, generates a token (shown once in the
// read-only "Secret" field, copied by the Copy button); after the test has provisioned a user and a group with
// it, finds them marked SCIM in the lists, their details disabled and explained, changes the user's root role,
// and after the test has deactivated the user through SCIM, finds them marked deactivated.
// Run by edge/tests/e2e/ui_scim.rs: at each checkpoint this prints one JSON line {"checkpoint": NAME, ...} and
// waits for a line "continue" on stdin. Screenshots (scim-*.png, 1280 px and 390 px wide) go to $SCREENSHOTS.
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
  await page.screenshot({ path: `${shots}/scim-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/scim-${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

async function navigate(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
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
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });
  const nav = () => page.getByRole("navigation", { name: "Main" });

  await page.goto(base + "/login?next=%2F");
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await navigate(page, page.getByRole("button", { name: "Sign in" }));
  await audit.check(page);

  // The page: off, the base URL to give the provider.
  await navigate(page, nav().getByRole("link", { name: "SCIM provisioning" }));
  await page.getByRole("heading", { name: "SCIM provisioning", level: 1 }).waitFor();
  const url = (await page.locator("#scim-base-url").textContent()).trim();
  if (url !== `${base}/scim/v2`) fail(`the base URL reads ${url}`);
  await page.getByText("Provisioning is off").waitFor();
  await shot(page, "01-off");

  // On, then a token: shown once, read-only, copied by the Copy button.
  await page.getByLabel("Enable SCIM provisioning").check();
  await navigate(page, page.getByRole("button", { name: "Save" }));
  await page.getByText("SCIM provisioning is on.").waitFor();
  await audit.check(page);
  await navigate(page, page.getByRole("button", { name: "Generate a token" }));
  const secretField = page.getByLabel("Secret");
  if ((await secretField.getAttribute("readonly")) === null) fail("the Secret field is not read-only");
  const secret = await secretField.inputValue();
  if (!secret.startsWith("scim:")) fail(`unexpected token ${secret}`);
  await page.getByRole("button", { name: "Copy" }).focus();
  await page.keyboard.press("Enter");
  await page.getByText("Copied to the clipboard.").waitFor();
  if ((await page.evaluate(() => navigator.clipboard.readText())) !== secret) fail("Copy did not copy the token");
  await shot(page, "02-token");
  await checkpoint("token-created", { secret });

  // Provisioned by the test: marked in the lists; the user's details disabled and explained; the role changes.
  await page.goto(base + "/admin/scim");
  if ((await page.content()).includes(secret)) fail("the page shows the token again");
  await page.getByText("A token is set").waitFor();
  await audit.check(page);
  await navigate(page, nav().getByRole("link", { name: "Users" }));
  await page.getByRole("row", { name: /Sam Provisioned SCIM/ }).waitFor();
  await shot(page, "03-users");
  await navigate(page, page.getByRole("link", { name: "Edit Sam Provisioned" }));
  await page.getByRole("note").getByText("Managed by SCIM").waitFor();
  if (!(await page.getByLabel("Name", { exact: true }).isDisabled())) fail("a provisioned user's name is editable");
  if (!(await page.getByLabel("Email").isDisabled())) fail("a provisioned user's e-mail is editable");
  if ((await page.getByRole("button", { name: "Set password" }).count()) !== 0) fail("a provisioned user has a password form");
  await page.getByLabel("Root role", { exact: true }).selectOption({ label: "Editor" });
  await navigate(page, page.getByRole("button", { name: "Save root role" }));
  await page.getByText("The user was saved.").waitFor();
  await shot(page, "04-user");
  await navigate(page, nav().getByRole("link", { name: "Groups" }));
  await page.getByRole("row", { name: /Support SCIM/ }).waitFor();
  await audit.check(page);
  await navigate(page, page.getByRole("link", { name: "Edit Support" }));
  await page.getByRole("note").getByText("Managed by SCIM").waitFor();
  if (!(await page.getByLabel("Name").isDisabled())) fail("a provisioned group's name is editable");
  if ((await page.getByRole("link", { name: "Delete group" }).count()) !== 0) fail("a provisioned group can be deleted");
  await shot(page, "05-group");
  await checkpoint("role-saved");

  // Deactivated by the provider: marked.
  await navigate(page, nav().getByRole("link", { name: "Users" }));
  await page.getByRole("row", { name: /Sam Provisioned SCIM.*deactivated/ }).waitFor();
  await shot(page, "06-deactivated");

  // The provisioning page in the dark scheme, as a person with a dark system setting sees it.
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto(base + "/admin/scim");
  await shot(page, "07-dark");
  await page.emulateMedia({ colorScheme: "light" });

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
