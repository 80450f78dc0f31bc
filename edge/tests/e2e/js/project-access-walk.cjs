// Access per project in a real browser (playwright-core driving Debian's chromium), by role and accessible
// name: an Admin creates the custom role "switch in development" on the Roles page, gives the Viewer vera the
// Member role and the Viewer dora that custom role in project alpha on its Access page; vera, signed in,
// creates a flag in alpha and finds no edit controls in beta; dora switches a flag on in development and has
// no switch in production; the Admin removes vera, whose next page has no edit controls.
// Run by edge/tests/e2e/ui_project_access.rs: at each checkpoint this prints one JSON line
// {"checkpoint": NAME} and waits for a line "continue" on stdin while the test checks the control plane.
// Screenshots (project-access-*.png, 1280 px and 390 px wide, light and dark) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder).

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const shots = process.env.SCREENSHOTS;
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const PASSWORD = "correct horse battery";
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
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: `${shots}/project-access-${name}-${scheme}-1280.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${shots}/project-access-${name}-${scheme}-390.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  }
  await page.emulateMedia({ colorScheme: "light" });
  await audit.check(page);
}

// Clicks something that loads a page, waits for it and checks it (axe-core, light and dark).
async function navigate(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
  await audit.check(page);
}

async function visit(page, path) {
  await page.goto(base + path);
  await audit.check(page);
}

async function pressEnter(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.press("Enter")]);
  await audit.check(page);
}

async function signedIn(browser, errors, username) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  audit.watch(page);
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`${username}: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`${username}: ${response.status()} ${response.url()}`);
  });
  await visit(page, "/login?next=%2F");
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(PASSWORD);
  // Enter submits, as people do.
  await pressEnter(page, page.getByLabel("Password"));
  if (/\/login/.test(page.url())) fail(`${username} did not get in: ${page.url()}`);
  return page;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const errors = [];
  const admin = await signedIn(browser, errors, "alice");

  // The Roles page: a custom project role that may switch flags in development only.
  await visit(admin, "/admin/roles");
  await navigate(admin, admin.getByRole("link", { name: "New role" }));
  await admin.getByLabel("Name", { exact: true }).fill("switch in development");
  await admin.getByLabel("Description").fill("Release helpers: switch flags in development");
  await admin.getByRole("checkbox", { name: "Switch flags on and off in development" }).check();
  await navigate(admin, admin.getByRole("button", { name: "Save role" }));
  if (!/\/admin\/roles$/.test(admin.url())) fail(`after saving the role: ${admin.url()}`);
  await admin.getByRole("link", { name: "Edit switch in development" }).waitFor();
  await shot(admin, "01-roles");

  // Alpha's Access page: vera becomes a Member, dora gets the custom role.
  await visit(admin, "/projects/alpha/overview");
  await navigate(admin, admin.getByRole("link", { name: "Access", exact: true }));
  if (!/\/projects\/alpha\/access$/.test(admin.url())) fail(`Access link went to ${admin.url()}`);
  await shot(admin, "02-access-empty");
  await admin.getByLabel("Person or group").selectOption({ label: "vera" });
  await admin.getByLabel("Role", { exact: true }).selectOption({ label: "Member" });
  await navigate(admin, admin.getByRole("button", { name: "Give access" }));
  await admin.getByLabel("Person or group").selectOption({ label: "dora" });
  await admin.getByLabel("Role", { exact: true }).selectOption({ label: "switch in development" });
  await navigate(admin, admin.getByRole("button", { name: "Give access" }));
  await admin.getByRole("cell", { name: /^vera\b/ }).waitFor();
  await admin.getByRole("cell", { name: /^dora\b/ }).waitFor();
  await shot(admin, "03-access-given");
  await checkpoint("access-given");

  // vera works in alpha: a new flag, typed and submitted with Enter.
  const vera = await signedIn(browser, errors, "vera");
  await visit(vera, "/projects/alpha");
  await navigate(vera, vera.getByRole("link", { name: "New flag" }));
  await vera.getByLabel("Name").fill("vera-flag");
  await pressEnter(vera, vera.getByLabel("Name"));
  if (!/\/projects\/alpha\/features\/vera-flag/.test(vera.url())) fail(`vera's new flag: ${vera.url()}`);
  if ((await vera.getByRole("switch").count()) === 0) fail("vera has no switch on her own flag in alpha");
  await checkpoint("member-created-flag");

  // ...and reads beta, with no control that changes anything.
  await visit(vera, "/projects/beta/features/beta-flag");
  if ((await vera.getByRole("switch").count()) !== 0) fail("vera sees switches in beta");
  if ((await vera.getByRole("link", { name: /Add strategy/ }).count()) !== 0) fail("vera may add strategies in beta");
  await visit(vera, "/projects/beta");
  if ((await vera.getByRole("link", { name: "New flag" }).count()) !== 0) fail("vera may create flags in beta");
  await shot(vera, "04-member-in-beta");

  // dora may switch in development, and only there.
  const dora = await signedIn(browser, errors, "dora");
  await visit(dora, "/projects/alpha/features/alpha-flag");
  if ((await dora.getByRole("switch", { name: "Enabled in production" }).count()) !== 0)
    fail("dora has a switch in production");
  if ((await dora.getByRole("link", { name: /Add strategy/ }).count()) !== 0) fail("dora may add strategies");
  await navigate(dora, dora.getByRole("switch", { name: "Enabled in development" }));
  const switched = dora.getByRole("switch", { name: "Enabled in development" });
  if ((await switched.getAttribute("aria-checked")) !== "true") fail("development did not switch on");
  await shot(dora, "05-switch-in-development");
  await checkpoint("switched-in-development");

  // The Admin removes vera; her next page has no edit controls in alpha.
  await visit(admin, "/projects/alpha/access");
  await navigate(admin, admin.getByRole("button", { name: "Remove vera" }));
  if ((await admin.getByRole("cell", { name: /^vera\b/ }).count()) !== 0) fail("vera is still listed");
  await visit(vera, "/projects/alpha");
  if ((await vera.getByRole("link", { name: "New flag" }).count()) !== 0) fail("vera may still create flags in alpha");
  await checkpoint("revoked");

  if (errors.length) fail(`errors in the browser:\n${errors.join("\n")}`);
  audit.finish();
  await browser.close();
  await checkpoint("done");
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
