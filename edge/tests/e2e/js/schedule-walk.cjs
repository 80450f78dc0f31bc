// A scheduled change request in a real browser (Debian's chromium driven by playwright-core), by role and
// accessible name. Run by edge/tests/e2e/ui_schedule.rs, which sets up the users, flags and two requests in
// review through the admin API and checks the binaries between steps: at each checkpoint this prints one
// JSON line {"checkpoint": NAME, ...} and waits for the line "continue" on stdin. Screenshots (schedule-*.png,
// at 1280 px and 390 px) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder), REQUESTS (the
// two requests' ids, comma-separated).

const { chromium } = require("playwright-core");
const { Audit } = require("./audit.cjs");
const readline = require("node:readline");

const base = process.env.VEXIL_URL;
const shots = process.env.SCREENSHOTS;
const [timed, later] = process.env.REQUESTS.split(",");
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
  await page.screenshot({ path: `${shots}/schedule-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/schedule-${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

// Clicks a control that submits a form and waits for the page it leads to.
async function submitWith(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
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

// `seconds` from now as the form's `datetime-local` control takes it (UTC, to the second), and as the API
// answers it.
function utcIn(seconds) {
  const typed = new Date(Date.now() + seconds * 1000).toISOString().slice(0, 19);
  return { typed, scheduledAt: `${typed}.000Z` };
}

async function schedule(page, button, seconds) {
  const at = utcIn(seconds);
  await page.getByLabel("Date and time (UTC)").fill(at.typed);
  await submitWith(page, page.getByRole("button", { name: button, exact: true }));
  await page.getByRole("status").getByText("is scheduled: it will be applied at").waitFor();
  await page.getByText(`To be applied at ${at.typed.replace("T", " ")} UTC`).waitFor();
  return at;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const problems = [];
  const pathOf = (id) => `/projects/default/change-requests/${id}`;

  // ann approves both requests; an approved request offers the schedule form.
  const ann = await personAt(browser, "ann", pathOf(timed), problems);
  for (const id of [timed, later]) {
    await ann.page.goto(base + pathOf(id));
    await submitWith(ann.page, ann.page.getByRole("button", { name: "Approve", exact: true }));
    await ann.page.getByText("Approved by ann").waitFor();
  }
  await ann.context.close();

  const ed = await personAt(browser, "ed", pathOf(timed), problems);
  await ed.page.getByRole("heading", { level: 2, name: "Schedule" }).waitFor();
  await ed.page.getByText("In UTC (Coordinated Universal Time), not your own time zone").waitFor();
  await screenshot(ed.page, "01-approved");

  // Scheduled an hour ahead: the schedule, Reschedule and Cancel schedule.
  let at = await schedule(ed.page, "Schedule", 3600);
  expect((await ed.page.getByRole("button", { name: "Cancel schedule", exact: true }).count()) === 1,
    "no Cancel schedule");
  expect((await ed.page.getByRole("button", { name: "Cancel", exact: true }).count()) === 0,
    "a scheduled request offers Cancel beside Cancel schedule");
  await checkpoint("scheduled", { scheduledAt: at.scheduledAt });
  await screenshot(ed.page, "02-scheduled");

  // Rescheduled a few seconds ahead: the control plane applies it by itself.
  at = await schedule(ed.page, "Reschedule", 6);
  await checkpoint("rescheduled", { scheduledAt: at.scheduledAt });
  const applied = ed.page.getByText("Applied on schedule at");
  for (let tries = 0; (await applied.count()) === 0; tries++) {
    expect(tries < 60, "the request was not applied on its schedule within 30 s");
    await ed.page.waitForTimeout(500);
    await ed.page.reload();
  }
  await ed.page.getByText("Applied", { exact: true }).first().waitFor();
  await screenshot(ed.page, "03-applied");
  await checkpoint("applied");

  // The other one: scheduled, then its schedule cancelled (and with it the request, as in Unleash).
  await ed.page.goto(base + pathOf(later));
  await schedule(ed.page, "Schedule", 3600);
  await submitWith(ed.page, ed.page.getByRole("button", { name: "Cancel schedule", exact: true }));
  await ed.page.getByRole("status").getByText("was cancelled").waitFor();
  expect((await ed.page.getByRole("heading", { level: 2, name: "Schedule" }).count()) === 0,
    "a cancelled request shows a schedule");
  await screenshot(ed.page, "04-cancelled");
  await checkpoint("cancelled");

  await browser.close();
  expect(problems.length === 0, `the browser met errors: ${problems.join("; ")}`);
  audit.finish();
  await checkpoint("done");
}

main().then(() => process.exit(0), (error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
  process.exit(1);
});
