// The usage pages of the admin web UI in a real browser (Debian's chromium through playwright-core), by
// role and accessible name: a flag's usage chart, the applications, the edges and the event log. Run by
// edge/tests/e2e/ui_usage.rs, which has made SDKs post registrations and counts through an edge before
// starting it. At each checkpoint this prints {"checkpoint": NAME} as one JSON line and reads one line
// ("continue") before going on; screenshots go to $SCREENSHOTS as usage-NN-<page>-<width>.png.
//
// Environment: VEXIL_URL, CHROMIUM, SCREENSHOTS, and what the test arranged: FLAG, APP, EDGE_ID, REVISION,
// YES, NO (the counts posted before the walk), YES_AFTER (the yes count after the checkpoint "usage"), SERVED
// (how often the edge served the flag to a frontend token before the walk).

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}
const base = process.env.VEXIL_URL;
const folder = process.env.SCREENSHOTS;
const audit = new Audit();
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function reached(name) {
  console.log(JSON.stringify({ checkpoint: name }));
  const reply = await input.next();
  if (reply.done || reply.value.trim() !== "continue") {
    throw new Error(`stopped at ${name}: ${reply.value}`);
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

// The page at both widths the issue names, then back to the wide one.
async function capture(page, name) {
  for (const [width, height] of [[1280, 900], [390, 844]]) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: `${folder}/usage-${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

async function follow(page, locator) {
  await Promise.all([page.waitForLoadState("load"), locator.click()]);
  await page.waitForLoadState("load");
}

async function run() {
  const [flag, app, edgeId, revision] = ["FLAG", "APP", "EDGE_ID", "REVISION"].map(env);
  const [yes, no, yesAfter, served] = ["YES", "NO", "YES_AFTER", "SERVED"].map(env);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  audit.watch(page);
  const problems = [];
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
  page.on("response", (response) => response.status() >= 400 && problems.push(`${response.status()} ${response.url()}`));

  await page.goto(`${base}/login`);
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await follow(page, page.getByRole("button", { name: "Sign in" }));
  await audit.check(page);

  // The flag's page → Usage: the totals as text, the chart as an image with its description.
  await page.goto(`${base}/projects/default/features/${flag}`);
  await audit.check(page);
  await follow(page, page.getByRole("link", { name: "Usage", exact: true }));
  expect(page.url().endsWith(`/projects/default/features/${flag}/metrics`), `usage URL: ${page.url()}`);
  const development = page.getByRole("region", { name: "development" });
  // Two series, never added up: what the SDK reported and what the edge served to the browser app.
  const reported = development.locator(".usage-series").filter({ has: page.getByRole("heading", { name: /^Reported by SDKs/ }) });
  const totals = (await reported.locator(".usage-totals").innerText()).trim();
  expect(totals === `${yes} yes · ${no} no`, `development totals: ${totals}`);
  const chart = development.getByRole("img", { name: `SDK counts of ${flag} in development, per hour` });
  await chart.waitFor();
  const servedSeries = development.locator(".usage-series").filter({ has: page.getByRole("heading", { name: /^Served by edges/ }) });
  const servedTotals = (await servedSeries.locator(".usage-totals").innerText()).trim();
  expect(servedTotals === `${served} yes · 0 no`, `served by edges: ${servedTotals}`);
  await development.getByRole("img", { name: `Edge evaluations of ${flag} in development, per hour` }).waitFor();
  await capture(page, "01-flag-usage");
  await page.emulateMedia({ colorScheme: "dark" });
  await page.screenshot({ path: `${folder}/usage-02-flag-usage-dark-1280.png`, fullPage: true });
  await page.emulateMedia({ colorScheme: "light" });
  await reported.getByText("Show the numbers").click();
  const cells = await reported.getByRole("table").locator("tbody tr").first().locator("td").allInnerTexts();
  expect(cells[1] === yes && cells[2] === no, `the hour's row: ${cells}`);

  // More counts arrive through the edge while the page is open.
  await reached("usage");
  await page.reload();
  const later = (await reported.locator(".usage-totals").innerText()).trim();
  expect(later === `${yesAfter} yes · ${no} no`, `totals after more counts: ${later}`);

  // Applications → the app that registered through the edge → its instance and the flag it uses.
  await follow(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Applications" }));
  await capture(page, "03-applications");
  await follow(page, page.getByRole("link", { name: app, exact: true }));
  await page.getByRole("heading", { name: app, level: 1 }).waitFor();
  await page.getByRole("region", { name: "Instances" }).getByRole("cell", { name: "walk-instance-1" }).waitFor();
  await page.getByRole("region", { name: "Flags it uses" }).getByText(flag, { exact: true }).waitFor();
  await capture(page, "04-application");

  // Edges: the running edge at the control plane's revision.
  await follow(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Edges" }));
  const row = page.getByRole("row").filter({ hasText: edgeId });
  const revisionCell = (await row.getByRole("cell").nth(2).innerText()).trim();
  expect(revisionCell === `${revision} current`, `the edge's revision: ${revisionCell}`);
  await capture(page, "05-edges");
  await reached("edges");

  // Events, filtered by the flag: its creation with what it set.
  await follow(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Events" }));
  await page.getByLabel("Flag").fill(flag);
  await follow(page, page.getByRole("button", { name: "Filter" }));
  expect(page.url().includes(`flag=${flag}`), `a linkable filter: ${page.url()}`);
  // Each event one line by day ("Today"), what it changed behind "Show the change".
  const events = page.getByRole("list", { name: "Today" }).locator(":scope > li");
  const texts = await events.allInnerTexts();
  expect(texts.length > 0 && texts.every((text) => text.includes(flag)), `only the flag's events: ${texts}`);
  const created = events.filter({ hasText: `created the flag ${flag}` });
  await created.getByText("Show the change", { exact: true }).click();
  await created.getByRole("list", { name: "What changed" }).getByRole("listitem").filter({ hasText: `name: now ${flag}` }).waitFor();
  await capture(page, "06-events");
  await page.getByLabel("Event type").selectOption("feature-created");
  await follow(page, page.getByRole("button", { name: "Filter" }));
  expect((await events.count()) === 1, "one creation event");

  expect(problems.length === 0, `errors in the browser: ${problems.join("; ")}`);
  audit.finish();
  await browser.close();
  await reached("done");
}

run().then(
  () => process.exit(0),
  (error) => {
    console.log(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }));
    process.exit(1);
  },
);
