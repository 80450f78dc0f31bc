// Change requests and the playground in a real browser (Debian's chromium driven by playwright-core), by
// role and accessible name. Run by edge/tests/e2e/ui_changes.rs, which sets up the users and flags through
// the admin API and checks the edge between steps: at each checkpoint this prints one JSON line
// {"checkpoint": NAME, ...} and waits for the line "continue" on stdin. Screenshots (changes-*.png, at
// 1280 px and 390 px) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder).

const { chromium } = require("playwright-core");
const { Audit } = require("./audit.cjs");
const readline = require("node:readline");

const base = process.env.VEXIL_URL;
const shots = process.env.SCREENSHOTS;
const audit = new Audit();
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const PASSWORD = "correct horse battery";

async function checkpoint(name, detail = {}) {
  process.stdout.write(JSON.stringify({ checkpoint: name, ...detail }) + "\n");
  const answer = await input.next();
  if (answer.done || answer.value.trim() !== "continue") {
    throw new Error(`the test stopped at ${name}: ${answer.value}`);
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

async function screenshot(page, name) {
  await page.screenshot({ path: `${shots}/changes-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/changes-${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

// Clicks a control that submits a form and waits for the page it leads to.
async function submitWith(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
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

// A browser context of its own per person: `path` asks for the sign-in, which leads back to it.
async function personAt(browser, username, path, problems) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  audit.watch(page);
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`${username}: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${username}: ${response.status()} ${response.url()}`);
  });
  await page.goto(base + path);
  expect(page.url().includes("/login"), `${username} was not asked to sign in: ${page.url()}`);
  await audit.check(page);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(PASSWORD);
  await submitWith(page, page.getByRole("button", { name: "Sign in" }));
  expect(page.url() === base + path, `${username} landed on ${page.url()}, not ${path}`);
  return { context, page };
}

async function buttonCount(page, name) {
  return page.getByRole("button", { name, exact: true }).count();
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const problems = [];

  // ed switches the flag on in a protected environment: a draft, which the notice links to.
  const ed = await personAt(browser, "ed", "/projects/default", problems);
  await ed.page.getByRole("link", { name: "Change requests", exact: true }).click();
  await ed.page.waitForURL(/\/change-requests$/);
  await ed.page.getByText("No open change requests in this project.").waitFor();
  await screenshot(ed.page, "01-list-empty");
  await ed.page.goto(base + "/projects/default");
  await submitWith(ed.page, ed.page.getByRole("switch", { name: "guarded in development" }));
  await ed.page.getByRole("status").getByText("your change was added to change request").waitFor();
  await screenshot(ed.page, "02-draft-notice");
  const open = ed.page.getByRole("link", { name: /^Open change request #\d+$/ });
  const requestPath = new URL(await open.getAttribute("href"), base).pathname;
  await open.click();
  await ed.page.waitForURL(base + requestPath);
  await ed.page.getByRole("heading", { level: 1, name: /Change request #\d+/ }).waitFor();
  await ed.page.getByRole("list", { name: "What changed" }).getByText("enabled:").waitFor();
  expect((await buttonCount(ed.page, "Approve")) === 0, "the author is offered Approve on a draft");
  await checkpoint("drafted", { request: requestPath });

  await ed.page.getByLabel("Comment", { exact: true }).fill("Turning guarded on for the <b>launch</b>");
  await submitWith(ed.page, ed.page.getByRole("button", { name: "Add comment", exact: true }));
  await ed.page.getByText("Turning guarded on for the <b>launch</b>").waitFor();
  await screenshot(ed.page, "03-draft");
  await submitWith(ed.page, ed.page.getByRole("button", { name: "Submit for review", exact: true }));
  await ed.page.getByText("In review", { exact: true }).first().waitFor();
  expect((await buttonCount(ed.page, "Approve")) === 0, "the author is offered Approve in review");
  await checkpoint("submitted");

  // Two other Editors approve.
  for (const [index, name] of ["ann", "bob"].entries()) {
    const reviewer = await personAt(browser, name, requestPath, problems);
    expect((await buttonCount(reviewer.page, "Apply")) === 0, `${name} is offered Apply before approving`);
    await submitWith(reviewer.page, reviewer.page.getByRole("button", { name: "Approve", exact: true }));
    await reviewer.page.getByText(`Approved by ${name}`).waitFor();
    expect((await buttonCount(reviewer.page, "Approve")) === 0, `${name} is offered Approve twice`);
    await screenshot(reviewer.page, `0${4 + index}-approved-by-${name}`);
    await reviewer.context.close();
  }
  await checkpoint("approved");

  // The author: still no Approve, now Apply.
  await ed.page.reload();
  expect((await buttonCount(ed.page, "Approve")) === 0, "the author is offered Approve when approved");
  await submitWith(ed.page, ed.page.getByRole("button", { name: "Apply", exact: true }));
  await ed.page.getByText("Applied", { exact: true }).first().waitFor();
  expect((await buttonCount(ed.page, "Cancel")) === 0, "an applied request offers Cancel");
  await screenshot(ed.page, "06-applied");
  await checkpoint("applied");
  await ed.page.goto(base + "/projects/default/change-requests");
  await ed.page.getByRole("link", { name: "Closed", exact: true }).click();
  await ed.page.waitForURL(/view=closed/);
  await ed.page.getByRole("table").getByText("Applied").waitFor();
  await screenshot(ed.page, "07-list-closed");

  // The playground: the constraint that decided, for NO and for SE.
  await ed.page.getByRole("link", { name: "Playground", exact: true }).click();
  await ed.page.waitForURL(/\/playground$/);
  await screenshot(ed.page, "08-playground-empty");
  await ed.page.getByLabel("Environment").selectOption("development");
  await ed.page.getByLabel("User ID").fill("u1");
  await inPlace(ed.page, () => ed.page.getByRole("button", { name: "Add property", exact: true }).click());
  await ed.page.getByLabel("Property name").fill("country");
  await ed.page.getByLabel("Property value").fill("NO");
  await submitWith(ed.page, ed.page.getByRole("button", { name: "Evaluate", exact: true }));
  const nordic = ed.page.getByRole("article", { name: "Flag nordic" });
  await nordic.getByText("On", { exact: true }).waitFor();
  await nordic.getByText("Matched: decided by “country is one of NO” (true)").waitFor();
  await screenshot(ed.page, "09-playground-on");
  await ed.page.getByLabel("Property value").fill("SE");
  await submitWith(ed.page, ed.page.getByRole("button", { name: "Evaluate", exact: true }));
  await nordic.getByText("Off", { exact: true }).waitFor();
  await nordic.getByText("Not matched: decided by “country is one of NO” (false)").waitFor();
  await screenshot(ed.page, "10-playground-off");

  await browser.close();
  expect(problems.length === 0, `the browser met errors: ${problems.join("; ")}`);
  audit.finish();
  await checkpoint("done");
}

main().then(() => process.exit(0), (error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
  process.exit(1);
});
