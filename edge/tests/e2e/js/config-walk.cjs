// The UI's configuration pages in a real browser (Debian's chromium driven by playwright-core), by role and
// accessible name: a project with change requests in development, a context field whose legal values the
// strategy form's constraint editor offers, a custom strategy in the strategy form's list until it is
// deprecated, and a CORS origin for the frontend API. Run by edge/tests/e2e/ui_config.rs: at each checkpoint
// this prints one JSON line {"checkpoint": NAME} and waits for the line "continue" on stdin while the test
// checks the admin API and the edge. Screenshots (config-*.png, 1280 px and 390 px wide) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder).

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const folder = process.env.SCREENSHOTS;
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const audit = new Audit();

async function checkpoint(name) {
  process.stdout.write(JSON.stringify({ checkpoint: name }) + "\n");
  const reply = await input.next();
  if (reply.done || reply.value.trim() !== "continue") throw new Error(`stopped at ${name}`);
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

async function screenshots(page, name) {
  await page.screenshot({ path: `${folder}/config-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${folder}/config-${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

// Presses a control that sends a form and waits for the page the answer leads to.
async function press(page, control) {
  await Promise.all([page.waitForEvent("load"), control.click()]);
}

// Runs `action`, which redraws a form in place (the script's data-redraw forms: no page load), and waits
// until the redrawn form is there.
async function inPlace(page, action) {
  await page.evaluate(() => {
    for (const form of document.querySelectorAll("form[data-redraw]")) form.dataset.walkOld = "yes";
  });
  await action();
  await page.waitForSelector("form[data-redraw]:not([data-walk-old])");
}

async function navigate(page, link) {
  await press(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: link }));
}

// The strategy form of flag "checkout" in development.
async function strategyForm(page) {
  await page.goto(base + "/projects/default/features/checkout");
  await press(page, page.getByRole("link", { name: "Add strategy to development" }));
}

async function run() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  audit.watch(page);
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
  });

  await page.goto(base + "/login");
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await press(page, page.getByRole("button", { name: "Sign in" }));
  await audit.check(page);

  // A project that does not use development at first.
  await navigate(page, "Projects");
  await press(page, page.getByRole("link", { name: "New project" }));
  await audit.check(page);
  await page.getByLabel("Project name").fill("Web shop <b>two</b>");
  await page.getByLabel("Project id").fill("web");
  await page.getByLabel("Description").fill(
    "Everything the web shop serves, with a long description to see how the list wraps it at 390 px wide.",
  );
  await page.getByRole("checkbox", { name: "development" }).uncheck();
  await screenshots(page, "01-projects");
  await press(page, page.getByRole("button", { name: "Create project" }));
  expect(page.url().endsWith("/projects/web/settings"), `not on the settings page: ${page.url()}`);
  expect((await page.getByLabel("Required approvals in development").count()) === 0, "development shown as used");

  // Development on for the project, then change requests there with 2 approvals.
  const use = page.getByRole("switch", { name: "Use development" });
  expect((await use.getAttribute("aria-checked")) === "false", "development used before the switch");
  await press(page, use);
  expect((await page.getByRole("switch", { name: "Use development" }).getAttribute("aria-checked")) === "true",
    "the switch did not turn on");
  await page.getByRole("checkbox", { name: "Change requests in development" }).check();
  await page.getByLabel("Required approvals in development").fill("2");
  const form = page.locator("form", { has: page.getByLabel("Change requests in development") });
  await press(page, form.getByRole("button", { name: "Save" }));
  expect(await page.getByRole("checkbox", { name: "Change requests in development" }).isChecked(), "not kept on");
  expect((await page.getByLabel("Required approvals in development").inputValue()) === "2", "approvals not kept");
  await screenshots(page, "02-project-settings");
  await checkpoint("change-requests");

  await navigate(page, "Projects");
  await page.getByRole("link", { name: "Web shop <b>two</b>", exact: true }).waitFor();
  await screenshots(page, "03-project-list");

  // A context field with two legal values, added as rows.
  await navigate(page, "Context fields");
  await press(page, page.getByRole("link", { name: "New context field" }));
  await page.getByLabel("Name").fill("region");
  await page.getByLabel("Description").fill("Where the customer shops");
  await inPlace(page, () => page.getByRole("button", { name: "Add legal value" }).click());
  await page.getByLabel("Legal value 1", { exact: true }).fill("eu");
  await page.getByLabel("Description of legal value 1").fill("Europe");
  await inPlace(page, () => page.getByRole("button", { name: "Add legal value" }).click());
  await page.getByLabel("Legal value 2", { exact: true }).fill("us");
  expect((await page.getByLabel("Description of legal value 1").inputValue()) === "Europe", "a row lost its text");
  await screenshots(page, "04-context-form");
  await press(page, page.getByRole("button", { name: "Save context field" }));
  await page.getByRole("cell", { name: "region" }).first().waitFor();
  await screenshots(page, "05-context-fields");

  // A custom strategy with one parameter.
  await navigate(page, "Strategies");
  await press(page, page.getByRole("link", { name: "New strategy" }));
  await page.getByLabel("Name").fill("by-tenant");
  await page.getByLabel("Title").fill("By tenant");
  await press(page, page.getByRole("button", { name: "Add parameter" }));
  await page.getByLabel("Parameter 1 name").fill("tenants");
  await page.getByLabel("Parameter 1 type").selectOption("list");
  await page.getByLabel("Parameter 1 description").fill("The tenants who get the flag");
  await page.getByRole("checkbox", { name: "Parameter 1 required" }).check();
  await screenshots(page, "06-strategy-form");
  await press(page, page.getByRole("button", { name: "Save strategy" }));
  await screenshots(page, "07-strategies");

  // Both reach the flag's strategy form: the strategy in its list, the legal values in the constraint editor.
  await navigate(page, "Flags");
  await audit.check(page);
  await press(page, page.getByRole("link", { name: "New flag" }));
  await page.getByLabel("Name").fill("checkout");
  await audit.check(page);
  await press(page, page.getByRole("button", { name: "Create flag" }));
  await audit.check(page);
  await strategyForm(page);
  const strategies = page.getByLabel("Strategy");
  expect((await strategies.locator("option", { hasText: "By tenant" }).count()) === 1, "the custom strategy is not offered");
  await inPlace(page, () => page.getByRole("button", { name: "Add constraint" }).click());
  await page.getByLabel("Context field").fill("region");
  // Choosing an operator redraws the form (the select sends it): the field's legal values are offered.
  await inPlace(page, () => page.getByLabel("Operator").selectOption("NOT_IN"));
  await page.getByText("Legal values: eu, us").waitFor();
  await screenshots(page, "08-constraint-legal-values");

  // Deprecated: no longer offered to new strategies.
  await navigate(page, "Strategies");
  await press(page, page.getByRole("button", { name: "Deprecate by-tenant" }));
  await page.getByRole("button", { name: "Reactivate by-tenant" }).waitFor();
  await checkpoint("strategy-deprecated");
  await strategyForm(page);
  expect((await page.getByLabel("Strategy").locator("option", { hasText: "By tenant" }).count()) === 0,
    "a deprecated strategy is still offered");

  // Environments: the list with its switches.
  await navigate(page, "Environments");
  await page.getByRole("switch", { name: "production enabled" }).waitFor();
  await screenshots(page, "09-environments");

  // The frontend API's CORS origins; a bad one is refused beside the field.
  await navigate(page, "Settings");
  await page.getByLabel("Allowed origins").fill("https://shop.example.com/path");
  await press(page, page.getByRole("button", { name: "Save origins" }));
  await page.locator("#origins-error").getByText("has a path, query or fragment").waitFor();
  await audit.check(page);
  // That refusal is the one expected 400 of the walk (the response, and the console's note of it).
  for (const expected of [
    (problem) => problem.startsWith("400 ") && problem.endsWith("/admin/settings/origins"),
    (problem) => problem.includes("status of 400"),
  ]) {
    const at = problems.findIndex(expected);
    expect(at >= 0, `the refused origin was not answered 400: ${problems.join("; ")}`);
    problems.splice(at, 1);
  }
  await page.getByLabel("Allowed origins").fill("https://shop.example.com");
  await press(page, page.getByRole("button", { name: "Save origins" }));
  expect((await page.getByLabel("Allowed origins").inputValue()) === "https://shop.example.com", "origin not kept");
  await screenshots(page, "10-settings");
  await checkpoint("origins");

  // The dark theme (the CSS variables of prefers-color-scheme: dark).
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto(base + "/projects/web/settings");
  await screenshots(page, "11-project-settings-dark");
  await page.goto(base + "/context");
  await screenshots(page, "12-context-fields-dark");

  expect(problems.length === 0, `the browser met errors: ${problems.join("; ")}`);
  audit.finish();
  await browser.close();
  await checkpoint("done");
}

// stdin stays open after the last checkpoint: the walk ends itself.
run().then(() => process.exit(0), (error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
  process.exit(1);
});
