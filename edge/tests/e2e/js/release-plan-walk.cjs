// Release templates and a flag's release plan in a real browser (Debian's chromium driven by playwright-core),
// by role and accessible name. Run by edge/tests/e2e/ui_release_plans.rs, which makes the Admin alice and the
// flag checkout (on in development) through the admin API and checks the edge between steps: at each
// checkpoint this prints one JSON line {"checkpoint": NAME} and waits for the line "continue" on stdin.
// Every page is audited (axe-core); screenshots (release-plan-*.png, 1280 px and 390 px) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder).

const { chromium } = require("playwright-core");
const { Audit } = require("./audit.cjs");
const readline = require("node:readline");

const base = process.env.VEXIL_URL;
const shots = process.env.SCREENSHOTS;
const audit = new Audit();
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function checkpoint(name) {
  process.stdout.write(JSON.stringify({ checkpoint: name }) + "\n");
  const answer = await input.next();
  if (answer.done || answer.value.trim() !== "continue") {
    throw new Error(`the test stopped at ${name}: ${answer.value}`);
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

async function screenshot(page, name) {
  await page.screenshot({ path: `${shots}/release-plan-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/release-plan-${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

// Clicks a control that submits a form (or follows a link) and waits for the page it leads to.
async function submitWith(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
}

// Adds milestone `name` on the template's page, then a gradual rollout of `rollout` % to it.
async function milestone(page, name, rollout) {
  const add = page.getByRole("region", { name: "Add milestone" });
  await add.getByLabel("Milestone name").fill(name);
  await submitWith(page, add.getByRole("button", { name: "Add milestone" }));
  await page.getByRole("status").getByText(`The milestone ${name} was added.`).waitFor();
  await submitWith(page, page.getByRole("link", { name: `Add strategy to ${name}` }));
  await page.getByRole("heading", { level: 1, name: "Add strategy" }).waitFor();
  expect((await page.getByLabel("Group").inputValue()) === "{{featureName}}", "the group is not {{featureName}}");
  await audit.check(page);
  await page.getByLabel("Rollout", { exact: true }).fill(String(rollout));
  await submitWith(page, page.getByRole("button", { name: "Save strategy" }));
  await page.getByRole("status").getByText(`The strategy of milestone ${name} was saved.`).waitFor();
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const problems = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  audit.watch(page);
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
  });
  await page.goto(base + "/projects/default");
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await submitWith(page, page.getByRole("button", { name: "Sign in" }));
  await audit.check(page);

  // A template of two milestones: nobody (0 %), then everyone (100 %).
  await submitWith(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Release templates" }));
  await page.getByText("No release templates yet.").waitFor();
  await audit.check(page);
  await submitWith(page, page.getByRole("link", { name: "New release template" }));
  await audit.check(page);
  await page.getByLabel("Name").fill("Dark launch first");
  await submitWith(page, page.getByRole("button", { name: "Create template" }));
  await page.getByRole("status").getByText("was created: add its milestones").waitFor();
  await milestone(page, "Dark launch", 0);
  await milestone(page, "Everyone", 100);
  await screenshot(page, "01-template");

  // On the flag's page: apply it in development, then start each milestone.
  await page.goto(base + "/projects/default/features/checkout");
  await submitWith(page, page.getByRole("button", { name: "Apply template in development" }));
  await page.getByRole("status").getByText("was applied in development").waitFor();
  await page.getByRole("heading", { name: "Release plan: Dark launch first" }).waitFor();
  await screenshot(page, "02-applied");
  await submitWith(page, page.getByRole("button", { name: "Start Dark launch in development" }));
  await page.getByRole("status").getByText("The milestone Dark launch started in development").waitFor();
  expect((await page.locator('li[aria-current="step"]').innerText()).includes("Dark launch"),
    "the active milestone is not marked");
  await checkpoint("dark-launch");
  await submitWith(page, page.getByRole("button", { name: "Start Everyone in development" }));
  await page.getByRole("status").getByText("The milestone Everyone started in development").waitFor();
  await screenshot(page, "03-everyone");
  await checkpoint("everyone");

  await browser.close();
  expect(problems.length === 0, `the browser met errors: ${problems.join("; ")}`);
  audit.finish();
  await checkpoint("done");
}

main().then(() => process.exit(0), (error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
  process.exit(1);
});
