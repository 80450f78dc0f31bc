// The admin web UI in Firefox (Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi, both
// installed by scripts/test; playwright-core drives only its own patched Firefox). Every control is found by
// its accessible name, as a person or a screen reader would. Run by edge/tests/e2e/ui_firefox.rs, which
// checks the edge's answers between steps: at each checkpoint this prints one JSON line {"checkpoint": NAME}
// and waits for one line on stdin before going on. Every page visited is checked at 1280 px and 390 px wide
// for horizontal scrolling and by axe-core's WCAG 2.1 A/AA rules (audit.cjs), and saved as a screenshot
// firefox-NAME-{1280,390}.png in $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), FIREFOX (the browser), SCREENSHOTS (a folder).

const puppeteer = require("puppeteer-core");
const readline = require("node:readline");
const { violationsOn, describe } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const shots = process.env.SCREENSHOTS;
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const FLAG = "checkout-ff";

// The last checkpoint or page passed, for the error message.
let reached = "the start";

async function checkpoint(name) {
  reached = `checkpoint ${name}`;
  process.stdout.write(JSON.stringify({ checkpoint: name }) + "\n");
  const answer = await lines.next();
  if (answer.done || answer.value.trim() !== "continue") {
    throw new Error(`the test stopped at ${name}: ${answer.value}`);
  }
}

function fail(message) {
  throw new Error(message);
}

// The ARIA query of puppeteer: the element whose accessible name is `name` (and whose role is `role`).
function aria(name, role) {
  return role ? `::-p-aria([name=${JSON.stringify(name)}][role="${role}"])` : `::-p-aria(${name})`;
}

async function byName(page, name, role) {
  const found = await page.waitForSelector(aria(name, role), { timeout: 10000 }).catch(() => null);
  return found || fail(`no ${role || "element"} named "${name}" on ${page.url()}`);
}

// The form control labelled `name`: the query by name also finds the field's <label>, and Firefox gives an
// <input list=…> the role combobox, so the control is the match that is an input, select or textarea.
async function control(page, name) {
  const until = Date.now() + 10000;
  while (Date.now() < until) {
    for (const match of await page.$$(aria(name))) {
      if (await match.evaluate((node) => ["INPUT", "SELECT", "TEXTAREA"].includes(node.tagName))) return match;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  fail(`no form control labelled "${name}" on ${page.url()}`);
}

// Clears the control labelled `name` and types `value` into it, key by key.
async function fill(page, name, value) {
  const input = await control(page, name);
  await input.evaluate((node) => {
    node.value = "";
  });
  await input.type(value);
}

async function choose(page, name, value) {
  const chosen = await (await control(page, name)).select(value);
  if (chosen[0] !== value) fail(`"${value}" is not an option of ${name}`);
}

// Runs `action`, which redraws a form in place (the script's data-redraw forms), and waits for the redrawn
// form.
async function inPlace(page, action) {
  await page.evaluate(() => {
    for (const form of document.querySelectorAll("form[data-redraw]")) form.dataset.walkOld = "yes";
  });
  await action();
  await page.waitForSelector("form[data-redraw]:not([data-walk-old])", { timeout: 10000 });
}

// Clicks a control that loads another page (a link, or a form's submit button) and waits for that page.
async function follow(page, element) {
  await Promise.all([page.waitForNavigation(), element.click()]);
}

async function switchState(page, name) {
  return (await byName(page, name, "switch")).evaluate((node) => node.getAttribute("aria-checked"));
}

// Tabs from the top of the page to the switch `name` (at most 100 presses; none when it has the focus) and
// presses `key` on it (" " is Space: puppeteer over BiDi knows it by its value only).
async function toggleByKeyboard(page, name, key) {
  // After a switch the page comes back with the focus on it (its #fragment): the key at once.
  const focusedNow = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute("aria-label"));
  if (focusedNow === name) {
    await Promise.all([page.waitForNavigation(), page.keyboard.press(key)]);
    return;
  }
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  for (let presses = 0; presses < 100; presses++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute("aria-label"));
    if (focused === name) {
      await Promise.all([page.waitForNavigation(), page.keyboard.press(key)]);
      return;
    }
  }
  fail(`Tab never reached the switch "${name}"`);
}

const overflows = [];
const violations = [];

// Screenshots of the page at 1280 px and 390 px wide, and at each width whether the page scrolls sideways
// and what axe finds.
async function shot(page, name) {
  reached = `page ${name}`;
  // Typing scrolls a field into view; a full-page screenshot in Firefox keeps the scroll, so the sticky
  // sidebar would be drawn halfway down.
  await page.evaluate(() => window.scrollTo(0, 0));
  for (const [width, height] of [
    [1280, 900],
    [390, 844],
  ]) {
    await page.setViewport({ width, height });
    // Against clientWidth, not innerWidth: Firefox draws a classic 12 px scrollbar, which innerWidth counts,
    // so innerWidth would let a page 12 px too wide pass.
    const [scrollWidth, clientWidth] = await page.evaluate(() => [
      document.documentElement.scrollWidth,
      document.documentElement.clientWidth,
    ]);
    if (scrollWidth > clientWidth)
      overflows.push(`${name} at ${width} px: ${scrollWidth} px of content in ${clientWidth} px`);
    for (const violation of await violationsOn(page))
      violations.push(describe(page.url(), { scheme: "light", width }, violation));
    await page.screenshot({ path: `${shots}/firefox-${name}-${width}.png`, fullPage: true });
  }
  await page.setViewport({ width: 1280, height: 900 });
}

// Closed on failure too: Firefox outlives a node that exits without closing it (and leaves its profile in
// /tmp).
let browser = null;

async function main() {
  browser = await puppeteer.launch({
    browser: "firefox",
    executablePath: process.env.FIREFOX,
    headless: true,
    defaultViewport: { width: 1280, height: 900 },
  });
  const page = await browser.newPage();
  const errors = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  // Every page and resource the browser loads answers (error pages are not part of this walk).
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });

  // Sign in.
  await page.goto(base + "/");
  if (!page.url().includes("/login")) fail(`not sent to the sign-in page: ${page.url()}`);
  await shot(page, "01-sign-in");
  await fill(page, "Username", "alice");
  await fill(page, "Password", "correct horse battery");
  await follow(page, await byName(page, "Sign in", "button"));
  if (!/\/personal$/.test(page.url())) fail(`not on the dashboard after signing in: ${page.url()}`);
  await follow(page, await byName(page, "Flags", "link"));
  if (!/\/projects\/default$/.test(page.url())) fail(`Flags did not open the flag list: ${page.url()}`);
  await shot(page, "02-flags-empty");

  // Create a flag.
  await follow(page, await byName(page, "New flag", "link"));
  await fill(page, "Name", FLAG);
  await choose(page, "Type", "release");
  await fill(page, "Description", "Checkout, walked in Firefox");
  await shot(page, "03-new-flag");
  await follow(page, await byName(page, "Create flag", "button"));
  if (!page.url().endsWith(`/projects/default/features/${FLAG}`)) fail(`not on the new flag's page: ${page.url()}`);

  // Switch it on in development.
  if ((await switchState(page, "Enabled in development")) !== "false") fail("on before the switch");
  await follow(page, await byName(page, "Enabled in development", "switch"));
  if ((await switchState(page, "Enabled in development")) !== "true") fail("the switch did not turn on");
  await shot(page, "04-flag-on");
  await checkpoint("enabled");

  // A flexibleRollout at 100 % with the constraint country IN [NO, SE], through the strategy form.
  await follow(page, await byName(page, "Add strategy to development", "link"));
  const strategy = await (await control(page, "Strategy")).evaluate((node) => node.value);
  if (strategy !== "flexibleRollout") fail(`the new strategy is ${strategy}, not flexibleRollout`);
  await fill(page, "Rollout", "100");
  // With JavaScript "Add constraint" and the operator redraw the form in place (no page load).
  const addConstraint = await byName(page, "Add constraint", "button");
  await inPlace(page, () => addConstraint.click());
  await fill(page, "Context field", "country");
  // The operator decides which value fields the form shows, so choosing it posts the form back.
  await inPlace(page, () => choose(page, "Operator", "IN"));
  await fill(page, "Values", "NO, SE");
  const rollout = await (await control(page, "Rollout")).evaluate((node) => node.value);
  if (rollout !== "100") fail(`the rollout typed was lost: ${rollout}`);
  await shot(page, "05-strategy-form");
  await follow(page, await byName(page, "Save strategy", "button"));
  if (!page.url().endsWith(`/features/${FLAG}#env-development`)) fail(`not back on the flag's page: ${page.url()}`);
  // Switching on an environment without strategies gave it the default strategy (100 % for everyone, as
  // Unleash does), so the new one is second; deleting the default leaves only the constrained one.
  const text = async (name) =>
    (await byName(page, name, "article")).evaluate((node) => node.textContent.replace(/\s+/g, " "));
  const added = await text("Strategy 2 in development");
  if (!added.includes("country is one of NO, SE")) fail(`the constraint is not shown on the strategy: ${added}`);
  const defaultStrategy = await byName(page, "Strategy 1 in development", "article");
  await follow(page, await defaultStrategy.waitForSelector(aria("Delete", "button")));
  if (!(await text("Strategy 1 in development")).includes("country is one of NO, SE"))
    fail("the default strategy was not deleted");
  await shot(page, "06-flag-strategy");
  await checkpoint("constrained");

  // The keyboard alone: Tab to the switch, Space turns it off, Enter turns it on again.
  await toggleByKeyboard(page, "Enabled in development", " ");
  if ((await switchState(page, "Enabled in development")) !== "false") fail("Space did not turn the switch off");
  await checkpoint("keyboard-off");
  const refocused = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute("aria-label"));
  if (refocused !== "Enabled in development") fail(`after the switch the focus is on ${refocused}, not the switch`);
  await toggleByKeyboard(page, "Enabled in development", "Enter");
  if ((await switchState(page, "Enabled in development")) !== "true") fail("Enter did not turn the switch on");
  await checkpoint("keyboard-on");

  // The Segments and Archive pages.
  await follow(page, await byName(page, "Segments", "link"));
  if (!page.url().endsWith("/segments")) fail(`not on the segments page: ${page.url()}`);
  await byName(page, "New segment", "link");
  await shot(page, "07-segments");
  await follow(page, await byName(page, "Archive", "link"));
  if (!page.url().endsWith("/archive")) fail(`not on the archive page: ${page.url()}`);
  await shot(page, "08-archive-empty");

  // Archive the flag, with its confirmation.
  await page.goto(`${base}/projects/default/features/${FLAG}`);
  await follow(page, await byName(page, "Archive flag", "link"));
  await shot(page, "09-archive-confirm");
  await follow(page, await byName(page, "Confirm", "button"));
  if (!page.url().endsWith("/archive")) fail(`not on the archive after archiving: ${page.url()}`);
  await byName(page, `Revive ${FLAG}`, "button");
  await shot(page, "10-archive");
  await checkpoint("archived");

  if (overflows.length > 0) fail(`pages scroll horizontally: ${overflows.join("; ")}`);
  if (violations.length > 0)
    fail(`accessibility audit (axe-core, WCAG 2.1 A/AA), ${violations.length} problem(s):\n  ${violations.join("\n  ")}`);
  if (errors.length > 0) fail(`console errors: ${errors.join("; ")}`);
  await browser.close();
  browser = null;
  await checkpoint("done");
}

main().then(
  () => process.exit(0),
  async (error) => {
    // Before the error line: the test kills this process as soon as it reads it.
    if (browser) await browser.close().catch(() => {});
    const stack = String(error && error.stack ? error.stack : error);
    process.stdout.write(JSON.stringify({ error: `after ${reached}: ${stack}` }) + "\n");
    process.exit(1);
  },
);
