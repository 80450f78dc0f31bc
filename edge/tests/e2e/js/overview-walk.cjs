// A project's overview as its landing page (issue 30, issue 35 §3), in a real browser (Debian's chromium
// through playwright-core), by role and accessible name: anna signs in (typing, Enter), opens Projects and
// picks the project with a long name; its overview shows the health (a stale flag and one past its type's
// lifetime, each linked to its page), flags by type, environments, members and the latest events as
// sentences. Then the search finds an empty project with a long unbroken name, whose overview shows the first
// steps; "Connect an SDK" opens from the keyboard (Tab, Enter). Run by edge/tests/e2e/ui_overview.rs, which
// seeded the projects and flags. Every page is audited (audit.cjs); no page scrolls sideways at 390 px.
//
// Pictures: the overview at 1280 and 390 px, light and dark, to $IMAGES as
// ui-project-overview-<width>-<scheme>.png, and whole pages to $SCREENSHOTS as overview-*.png.
//
// Environment: VEXIL_URL, CHROMIUM, IMAGES, SCREENSHOTS, LONG_NAME and UNBROKEN_NAME (the projects' names).

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const images = process.env.IMAGES;
const shots = process.env.SCREENSHOTS;
const longName = process.env.LONG_NAME;
const unbrokenName = process.env.UNBROKEN_NAME;
const audit = new Audit();
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

// Presses Tab from the top of the page until `target` has the focus (at most 150 presses).
async function tabTo(page, target) {
  await page.locator("body").focus();
  const handle = await target.elementHandle();
  for (let presses = 0; presses < 150; presses++) {
    await page.keyboard.press("Tab");
    if (await handle.evaluate((element) => element === document.activeElement)) return presses + 1;
  }
  throw new Error(`Tab never reached ${await target.innerText()}`);
}

// Whether the page is wider than the window (it would scroll sideways).
async function scrollsSideways(page) {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
}

async function pictures(page, name, toImages) {
  for (const [width, height] of [[1280, 900], [390, 844]]) {
    await page.setViewportSize({ width, height });
    for (const scheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(!(await scrollsSideways(page)), `${name} scrolls sideways at ${width} px`);
      if (toImages) await page.screenshot({ path: `${images}/ui-project-overview-${width}-${scheme}.png` });
      await page.screenshot({ path: `${shots}/overview-${name}-${width}-${scheme}.png`, fullPage: true });
    }
    await page.emulateMedia({ colorScheme: "light" });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function run() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  audit.watch(page);
  const problems = [];
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
  page.on("response", (response) => response.status() >= 400 && problems.push(`${response.status()} ${response.url()}`));

  // Sign in as people do: type, Enter.
  await page.goto(`${base}/login`);
  await audit.check(page);
  await page.getByLabel("Username").fill("anna");
  await page.getByLabel("Password").fill("correct horse battery");
  await Promise.all([page.waitForURL(/\/personal$/), page.getByLabel("Password").press("Enter")]);
  await audit.check(page);

  // Projects → the project: its overview.
  await Promise.all([
    page.waitForURL(/\/projects$/),
    page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Projects" }).click(),
  ]);
  await audit.check(page);
  await Promise.all([
    page.waitForURL(/\/projects\/payments\/overview$/),
    page.getByRole("link", { name: longName, exact: true }).click(),
  ]);
  await page.getByRole("heading", { level: 1, name: longName }).waitFor();
  await audit.check(page);

  // Health: 3 of 5 flags healthy; the stale one and the old one listed, linked.
  const health = page.getByRole("region", { name: "Health" });
  const figure = await health.locator(".big-number").innerText();
  expect(figure === "60%", `the health: ${figure}`);
  const stale = health.getByRole("list", { name: /^Stale/ });
  await stale.getByRole("link", { name: "retired-banner", exact: true }).waitFor();
  const old = health.getByRole("list", { name: /^Potentially stale/ });
  const oldItem = old.getByRole("listitem").filter({ hasText: "invoice-pdf-renderer-with-a-rather-long-flag-name" });
  await oldItem.waitFor();
  expect((await oldItem.innerText()).includes("over 40 days old"), `why: ${await oldItem.innerText()}`);

  // Flags by type, environments, members, the latest events as sentences.
  const types = page.getByRole("region", { name: "Flags by type" });
  await types.getByRole("link", { name: "Kill switch" }).waitFor();
  const archived = await types.getByRole("definition").last().innerText();
  expect(archived === "1", `archived flags: ${archived}`);
  const environments = page.getByRole("region", { name: "Environments" });
  await environments.getByText("production", { exact: true }).waitFor();
  const members = page.getByRole("region", { name: "Members" });
  // Nobody has a role in this project (root roles hold everywhere besides): no members, and who has access.
  expect((await members.innerText()).includes("0 members"), await members.innerText());
  await members.getByRole("link", { name: "Who has access" }).waitFor();
  const activity = page.getByRole("region", { name: "Recent activity" });
  const today = activity.getByRole("list", { name: "Today" });
  await today.getByRole("listitem").filter({ hasText: "marked retired-banner as stale" }).waitFor();
  await today.getByRole("listitem").filter({ hasText: "switched new-checkout on in production" }).waitFor();
  await pictures(page, "payments", true);

  // The stale flag's link opens its page; back to the overview.
  await Promise.all([
    page.waitForURL(/\/projects\/payments\/features\/retired-banner$/),
    stale.getByRole("link", { name: "retired-banner", exact: true }).click(),
  ]);
  await audit.check(page);
  await page.goBack();
  await page.waitForURL(/\/overview$/);

  // The Flags button opens the project's flag list, which links back.
  await Promise.all([page.waitForURL(/\/projects\/payments$/), page.getByRole("main").getByRole("link", { name: "Flags", exact: true }).click()]);
  await audit.check(page);
  await Promise.all([page.waitForURL(/\/projects\/payments\/overview$/), page.getByRole("link", { name: "Project overview" }).click()]);

  // The empty project, found by the search: the first steps, "Connect an SDK" from the keyboard.
  await page.keyboard.press("/");
  await page.keyboard.type("laboratory");
  await Promise.all([page.waitForURL(/\/search\?q=/), page.keyboard.press("Enter")]);
  await audit.check(page);
  await Promise.all([
    page.waitForURL(/\/projects\/mobile-lab\/overview$/),
    page.getByRole("link", { name: unbrokenName, exact: true }).click(),
  ]);
  await page.getByRole("heading", { level: 1, name: unbrokenName }).waitFor();
  await page.getByText("No flags in this project yet.").waitFor();
  expect((await page.getByRole("region", { name: "Health" }).count()) === 0, "no health without flags");
  await audit.check(page);
  await pictures(page, "empty", false);
  const connect = page.getByRole("link", { name: "Connect an SDK" });
  await tabTo(page, connect);
  await Promise.all([page.waitForURL(/\/projects\/mobile-lab\/connect$/), page.keyboard.press("Enter")]);
  await page.getByRole("heading", { level: 1, name: "Connect an SDK" }).waitFor();
  await audit.check(page);

  expect(problems.length === 0, `errors in the browser: ${problems.join("; ")}`);
  audit.finish();
  await browser.close();
  process.stdout.write(JSON.stringify({ checkpoint: "done" }) + "\n");
  await lines.next();
}

run().then(
  () => process.exit(0),
  (error) => {
    process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
    process.exit(1);
  },
);
