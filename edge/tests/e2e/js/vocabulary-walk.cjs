// The admin UI's words for the API's names (issue 30 §3) in a real browser: a person adds a gradual rollout
// with a constraint by typing and pressing Tab and Enter (the operator chosen by typing its first letter, as
// in any <select>), then finds the constraint on the flag page as a chip by its words ("email ends with
// @example.com (ignoring case)"), the API's form in its tooltip. Screenshots of the strategy form and the flag
// page at 1280 and 390 px, light and dark, go to $SCREENSHOTS as vocabulary-<page>-<width>-<theme>.png; every
// page is audited (audit.cjs). Run by edge/tests/e2e/ui_vocabulary.rs, which checks what the admin API
// stored at the checkpoint "saved".
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder), FLAG.

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const shots = process.env.SCREENSHOTS;
const flag = process.env.FLAG;
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const audit = new Audit();

async function checkpoint(name, detail = {}) {
  process.stdout.write(JSON.stringify({ checkpoint: name, ...detail }) + "\n");
  const answer = await lines.next();
  if (answer.done || answer.value.trim() !== "continue") {
    throw new Error(`the test stopped at ${name}: ${answer.value}`);
  }
}

function fail(message) {
  throw new Error(message);
}

// The page at both widths in both themes, whole, and `part` (a locator) alone, to look at closely; the tab
// put back at 1280 px, light.
async function shots4(page, name, part) {
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [width, height] of [[1280, 900], [390, 844]]) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: `${shots}/vocabulary-${name}-${width}-${scheme}.png`, fullPage: true });
      await part.screenshot({ path: `${shots}/vocabulary-${name}-part-${width}-${scheme}.png` });
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1280, height: 900 });
}

// Presses `key` and waits for the page it loads.
async function pressAndLoad(page, key) {
  await Promise.all([page.waitForEvent("load"), page.keyboard.press(key)]);
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

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  audit.watch(page);

  await page.goto(base + "/login");
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await pressAndLoad(page, "Enter");
  await audit.check(page);
  // Signing in lands on the dashboard; Flags in the navigation opens the flag list.
  await Promise.all([page.waitForURL(/\/projects\/default$/), page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flags", exact: true }).click()]);
  await audit.check(page);
  await page.getByRole("link", { name: flag, exact: true }).focus();
  await pressAndLoad(page, "Enter");
  await audit.check(page);

  // The strategy form: its first strategy by the name people read, the API's name in the tooltip.
  await page.getByRole("link", { name: "Add strategy to development" }).focus();
  await pressAndLoad(page, "Enter");
  const strategy = page.getByLabel("Strategy", { exact: true });
  const chosen = await strategy.evaluate((select) => select.selectedOptions[0].textContent);
  if (chosen !== "Gradual rollout") fail(`the strategy offered first reads ${chosen}`);
  if ((await strategy.getAttribute("title")) !== "API name: flexibleRollout") fail("no API name in the tooltip");
  if ((await page.getByLabel("Group", { exact: true }).count()) !== 1) fail("no parameter labelled Group");
  const stickiness = await page
    .getByLabel("Stickiness")
    .evaluate((select) => select.selectedOptions[0].textContent);
  if (stickiness !== "Default (userId, then sessionId, then random)") fail(`stickiness reads ${stickiness}`);

  // Typed as a person does: the rollout, then "Add constraint" by keyboard.
  await page.getByLabel("Rollout", { exact: true }).focus();
  await page.keyboard.press("Control+A");
  await page.keyboard.type("50");
  await page.getByRole("button", { name: "Add constraint" }).focus();
  await inPlace(page, () => page.keyboard.press("Enter"));
  if ((await page.getByLabel("Rollout", { exact: true }).inputValue()) !== "50") fail("the rollout typed was lost");
  await page.getByLabel("Context field").focus();
  await page.keyboard.type("email");
  // Tab to the operator and type its first letter: "ends with" is chosen, and the form is drawn again for it.
  await page.keyboard.press("Tab");
  const operator = page.getByLabel("Operator");
  if (!(await operator.evaluate((select) => select === document.activeElement))) fail("Tab did not reach Operator");
  const options = await operator.evaluate((select) => [...select.options].map((option) => option.textContent));
  for (const words of ["is one of", "ends with", "is a version after", "≥"]) {
    if (!options.includes(words)) fail(`no operator reads "${words}": ${options.join(" | ")}`);
  }
  if (options.some((text) => /^[A-Z_]+$/.test(text))) fail(`an operator reads as the API's name: ${options}`);
  await inPlace(page, () => page.keyboard.press("e"));
  const picked = await page.getByLabel("Operator").evaluate((select) => [select.value, select.selectedOptions[0].textContent]);
  if (picked[0] !== "STR_ENDS_WITH" || picked[1] !== "ends with") fail(`the operator chosen: ${picked}`);
  if ((await page.getByLabel("Context field").inputValue()) !== "email") fail("the context field typed was lost");
  await page.getByLabel("Values").focus();
  await page.keyboard.type("@example.com");
  await page.keyboard.press("Tab");
  if (!(await page.getByLabel("Case insensitive").evaluate((box) => box === document.activeElement)))
    fail("Tab from Values did not reach Case insensitive");
  await page.keyboard.press("Space");
  await audit.check(page);
  await shots4(page, "strategy-form", page.locator("form.form-narrow"));
  // Enter in the context field saves (the form's first submit button is "Save strategy").
  await page.getByLabel("Context field").focus();
  await pressAndLoad(page, "Enter");
  if (!page.url().endsWith(`/features/${flag}#env-development`)) fail(`not back on the flag page: ${page.url()}`);
  await checkpoint("saved");

  // The flag page: the strategy by its name and summary, the constraint as a chip found by its words.
  const added = page.getByRole("article", { name: "Strategy 1 in development" });
  await added.getByText("Gradual rollout", { exact: true }).waitFor();
  await added.getByText("50% of users, group " + flag, { exact: true }).waitFor();
  const conditions = added.getByRole("list", { name: "Conditions, all must match" });
  const chip = conditions.getByRole("listitem").getByText("email ends with @example.com (ignoring case)", { exact: true });
  await chip.waitFor();
  const title = await chip.getAttribute("title");
  if (title !== "email STR_ENDS_WITH [@example.com] (case insensitive)") fail(`the chip's API form: ${title}`);
  const words = (await added.textContent()).replace(/\s+/g, " ");
  for (const raw of ["flexibleRollout", "STR_ENDS_WITH", "stickiness", "groupId"]) {
    if (words.includes(raw)) fail(`the strategy shows ${raw}: ${words}`);
  }
  await audit.check(page);
  await shots4(page, "flag-page", page.locator(".env-grid"));
  audit.finish();
  await browser.close();
  await checkpoint("done");
}

main().then(() => process.exit(0), (error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
  process.exit(1);
});
