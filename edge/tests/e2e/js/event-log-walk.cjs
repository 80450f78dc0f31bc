// The event log as a person reads it (issue 30 §2), in a real browser (Debian's chromium through
// playwright-core), by role and accessible name: anna signs in (typing, Enter), switches a flag on from the
// flag list and adds a gradual rollout with the strategy form (Enter saves); then the Events page and the
// flag's page say so in sentences, grouped by day, and the change of an event opens from the keyboard (Tab to
// "Show the change", Enter). Run by edge/tests/e2e/ui_event_log.rs, which seeded flags, variants with a JSON
// payload and a segment through the admin API. Every page is audited (audit.cjs).
//
// Pictures: the event log at 1280 and 390 px, light and dark, to $IMAGES as ui-event-log-<width>-<scheme>.png
// (the page as a person first sees it), and whole pages to $SCREENSHOTS as event-log-*.png.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), IMAGES (docs/images), SCREENSHOTS.

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const images = process.env.IMAGES;
const shots = process.env.SCREENSHOTS;
const audit = new Audit();
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

async function submit(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
}

// One event of a day's list, by the sentence a person reads (its link texts included).
function event(list, sentence) {
  return list.getByRole("listitem").filter({ hasText: sentence });
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
  // Signing in lands on the dashboard; Flags in the navigation opens the flag list.
  await Promise.all([page.waitForURL(/\/projects\/default$/), page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flags", exact: true }).click()]);
  await audit.check(page);

  // dark-mode on in production, from the flag list.
  await submit(page, page.getByRole("switch", { name: "dark-mode in production" }));
  const on = await page.getByRole("switch", { name: "dark-mode in production" }).getAttribute("aria-checked");
  expect(on === "true", "dark-mode did not switch on");

  // A gradual rollout of 50% for new-checkout in development: the strategy form, Enter saves.
  await page.getByRole("link", { name: "new-checkout", exact: true }).click();
  await page.waitForURL(/\/features\/new-checkout$/);
  await audit.check(page);
  await page.getByRole("link", { name: "Add strategy to development" }).click();
  await page.getByLabel("Rollout", { exact: true }).fill("50");
  await audit.check(page);
  await Promise.all([page.waitForURL(/\/features\/new-checkout#env-development$/), page.getByLabel("Rollout", { exact: true }).press("Enter")]);

  // The Events page: sentences by day.
  await submit(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Events" }));
  await page.getByRole("heading", { level: 1, name: "Event log" }).waitFor();
  await page.getByRole("heading", { level: 2, name: "Today" }).waitFor();
  const today = page.getByRole("list", { name: "Today" });
  await event(today, "anna switched dark-mode on in production").waitFor();
  await event(today, "anna added a gradual rollout of 50% to new-checkout in development").waitFor();
  const variants = event(today, "init-admin-token-1 (API token) set the variants of dark-mode in production to blue and green");
  await variants.waitFor();
  await event(today, "created the segment beta-testers").waitFor();
  await event(today, "created the permission flag dark-mode").waitFor();
  const switched = event(today, "anna switched dark-mode on in production");
  const link = switched.getByRole("link", { name: "dark-mode", exact: true });
  expect((await link.getAttribute("href")).endsWith("/projects/default/features/dark-mode"), "the flag is linked");
  const time = switched.locator("time");
  expect((await time.innerText()) === "just now", `how long ago: ${await time.innerText()}`);
  expect(/UTC$/.test(await time.getAttribute("title")), "the exact time as the time's title");
  expect((await switched.getByText("Show the change").count()) === 0, "a switch has no change to show");
  expect((await page.getByText("variants[0]").count()) === 0, "no JSON paths");
  expect((await page.getByRole("list", { name: "What changed" }).first().isVisible()) === false, "changes start closed");
  await page.screenshot({ path: `${shots}/event-log-closed-1280.png`, fullPage: true });

  // The variants' change, from the keyboard: Tab to its "Show the change", Enter.
  const summary = variants.getByText("Show the change", { exact: true });
  await tabTo(page, summary);
  await page.keyboard.press("Enter");
  const change = variants.getByRole("list", { name: "What changed" });
  await change.waitFor();
  expect(await variants.locator("details").evaluate((details) => details.open), "Enter opened the change");
  const payload = await change.locator("pre").first().innerText();
  expect(payload.includes('"color": "blue"'), `the payload laid out: ${payload}`);
  const name = change.getByRole("listitem").filter({ hasText: "variants 1 › name:" });
  // Read aloud with "now" before the new value ("was" before an old one), shown without it.
  const read = (await name.textContent()).replace(/\s+/g, " ").trim();
  expect(read === "variants 1 › name: now blue", `a value without quotes: ${read}`);
  await audit.check(page);

  for (const [width, height] of [[1280, 900], [390, 844]]) {
    await page.setViewportSize({ width, height });
    for (const scheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme: scheme });
      await variants.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${images}/ui-event-log-${width}-${scheme}.png` });
      await page.screenshot({ path: `${shots}/event-log-${width}-${scheme}.png`, fullPage: true });
    }
    await page.emulateMedia({ colorScheme: "light" });
  }
  await page.setViewportSize({ width: 1280, height: 900 });

  // The filters still narrow the log: the flag's events only.
  await page.getByLabel("Flag").fill("new-checkout");
  await Promise.all([page.waitForEvent("load"), page.getByLabel("Flag").press("Enter")]);
  expect(page.url().includes("flag=new-checkout"), `a linkable filter: ${page.url()}`);
  const filtered = await page.getByRole("list", { name: "Today" }).locator(":scope > li").allInnerTexts();
  expect(filtered.length === 2 && filtered.every((text) => text.includes("new-checkout")), `filtered: ${filtered}`);

  // The flag's page: the same sentences in its Event log section, days under its heading.
  await page.goto(`${base}/projects/default/features/dark-mode`);
  const section = page.getByRole("region", { name: "Event log" });
  await section.getByRole("heading", { level: 3, name: "Today" }).waitFor();
  await event(section.getByRole("list", { name: "Today" }), "anna switched dark-mode on in production").waitFor();
  expect((await section.getByRole("link", { name: "dark-mode", exact: true }).count()) === 0, "the flag not linked to itself");
  await audit.check(page);
  await section.screenshot({ path: `${shots}/event-log-flag-page-1280.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  await section.screenshot({ path: `${shots}/event-log-flag-page-390.png` });

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
