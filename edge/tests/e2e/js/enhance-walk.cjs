// The admin UI keeping people's place (issue 30 §4) and what Unleash's UI has (a rollout slider, copying a
// strategy to another environment, cloning a flag), in Chromium, by keyboard as people work: the flag list
// filters as a person types (no Apply, no page load), the project picker opens a project when chosen, the
// strategy form adds and removes a constraint in place with the focus on the new row's first field (a marker
// on `window` survives: no page was loaded), the rollout slider moves with ArrowRight and the number follows,
// a switch flipped comes back focused. Every page is audited (audit.cjs). Run by edge/tests/e2e/ui_enhance.rs,
// which checks the admin API at the checkpoints "saved", "copied" and "cloned".
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

// Presses `key` and waits for the page it loads.
async function pressAndLoad(page, key) {
  await Promise.all([page.waitForEvent("load"), page.keyboard.press(key)]);
}

// Marks this page (a property on window, gone with any page load) and returns a check that it is still the
// same page.
async function mark(page) {
  await page.evaluate(() => {
    window.vexilWalkMarker = "this page";
  });
  return async (what) => {
    if ((await page.evaluate(() => window.vexilWalkMarker)) !== "this page") fail(`${what} loaded a page`);
  };
}

// Runs `action`, which redraws a form in place (data-redraw), and waits until the redrawn form is there.
async function inPlace(page, action) {
  await page.evaluate(() => {
    for (const form of document.querySelectorAll("form[data-redraw]")) form.dataset.walkOld = "yes";
  });
  await action();
  await page.waitForSelector("form[data-redraw]:not([data-walk-old])");
}

async function focusedId(page) {
  return page.evaluate(() => document.activeElement && document.activeElement.id);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  audit.watch(page);
  const problems = [];
  page.on("pageerror", (error) => problems.push(String(error)));

  await page.goto(base + "/login");
  await audit.check(page);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("correct horse battery");
  await pressAndLoad(page, "Enter");
  await audit.check(page);
  // Signing in lands on the dashboard; Flags in the navigation opens the flag list.
  await Promise.all([page.waitForURL(/\/projects\/default$/), page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flags", exact: true }).click()]);
  await audit.check(page);

  // The flag list filters as a person types: no Apply button, no page load, the address follows, the count
  // is said in a live region.
  const sameList = await mark(page);
  if (await page.getByRole("button", { name: "Apply" }).isVisible()) fail("Apply is shown with JavaScript");
  if (await page.getByRole("button", { name: "Open" }).isVisible()) fail("Open is shown with JavaScript");
  await page.getByRole("searchbox", { name: "Search flags" }).focus();
  await page.keyboard.type("dark");
  await page.getByRole("link", { name: flag, exact: true }).waitFor({ state: "detached" });
  await page.getByRole("link", { name: "dark-mode", exact: true }).waitFor();
  await page.waitForFunction(() => new URLSearchParams(location.search).get("query") === "dark");
  const said = await page.locator("#flag-count").textContent();
  if (said !== "1 flag matches.") fail(`the live region says ${JSON.stringify(said)}`);
  await page.keyboard.press("Enter");
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Backspace");
  await page.getByRole("link", { name: flag, exact: true }).waitFor();
  await sameList("searching");
  if ((await focusedId(page)) !== "search") fail("the search box lost the focus while the list changed");
  await audit.check(page);
  await page.screenshot({ path: `${shots}/enhance-flag-search-1280.png` });

  // The project picker opens the project chosen.
  await Promise.all([page.waitForURL(/\/projects\/web$/), page.getByLabel("Project", { exact: true }).selectOption("web")]);
  await audit.check(page);
  await page.goto(`${base}/projects/default/features/${flag}`);
  await audit.check(page);

  // The strategy form, reached by keyboard.
  await page.getByRole("link", { name: "Add strategy to development" }).focus();
  await pressAndLoad(page, "Enter");
  const sameForm = await mark(page);
  // The rollout: typed in the number, the slider follows; ArrowRight on the slider, the number follows.
  const number = page.getByRole("spinbutton", { name: "Rollout" });
  const slider = page.getByRole("slider", { name: "Rollout slider" });
  await number.focus();
  await page.keyboard.press("Control+A");
  await page.keyboard.type("40");
  if ((await slider.inputValue()) !== "40") fail(`the slider did not follow the number: ${await slider.inputValue()}`);
  await page.keyboard.press("Shift+Tab");
  if ((await focusedId(page)) !== "param-rollout-slider") fail("Shift+Tab from the number did not reach the slider");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  if ((await number.inputValue()) !== "42") fail(`ArrowRight moved the number to ${await number.inputValue()}`);

  // Add constraint by keyboard: the new row's context field has the focus, no page was loaded.
  await page.getByRole("button", { name: "Add constraint" }).focus();
  await inPlace(page, () => page.keyboard.press("Enter"));
  if ((await focusedId(page)) !== "c0-context") fail(`after Add constraint the focus is on #${await focusedId(page)}`);
  await sameForm("Add constraint");
  if ((await number.inputValue()) !== "42") fail("the rollout typed was lost");
  await page.keyboard.type("country");
  await page.keyboard.press("Tab");
  if ((await focusedId(page)) !== "c0-operator") fail("Tab from the context field did not reach the operator");
  await page.keyboard.press("Tab");
  await page.keyboard.type("NO, SE");
  // A second constraint, then removed: the focus goes to the first one's context field.
  await page.getByRole("button", { name: "Add constraint" }).focus();
  await inPlace(page, () => page.keyboard.press("Enter"));
  if ((await focusedId(page)) !== "c1-context") fail(`after the second Add the focus is on #${await focusedId(page)}`);
  await page.getByRole("button", { name: "Remove constraint 2" }).focus();
  await inPlace(page, () => page.keyboard.press("Enter"));
  if ((await focusedId(page)) !== "c0-context") fail(`after Remove the focus is on #${await focusedId(page)}`);
  if ((await page.getByLabel("Values").inputValue()) !== "NO, SE") fail("the values typed were lost");
  await sameForm("Remove");
  await audit.check(page);
  // Enter in the context field saves: back on the flag page at development.
  await pressAndLoad(page, "Enter");
  if (!page.url().endsWith(`/features/${flag}#env-development`)) fail(`after saving: ${page.url()}`);
  await checkpoint("saved");
  await audit.check(page);

  // Copy the new strategy to production (a disclosure, then the environment's button).
  const added = page.getByRole("article", { name: "Strategy 2 in development" });
  await added.getByText("Copy to…").click();
  await Promise.all([page.waitForEvent("load"), added.getByRole("button", { name: "Copy to production" }).click()]);
  if (!page.url().endsWith("#env-production")) fail(`after copying: ${page.url()}`);
  const notice = await page.getByRole("status").first().textContent();
  if (!notice.includes("The strategy was copied from development to production.")) fail(`the notice: ${notice}`);
  await page.getByRole("article", { name: "Strategy 1 in production" }).waitFor();
  await checkpoint("copied");
  await audit.check(page);

  // A switch flipped by keyboard comes back focused, flipped.
  const production = page.getByRole("switch", { name: "Enabled in production" });
  await production.focus();
  await pressAndLoad(page, "Space");
  if ((await production.getAttribute("aria-checked")) !== "true") fail("the switch did not turn on");
  if (!(await production.evaluate((element) => element === document.activeElement)))
    fail(`after the switch the focus is on #${await focusedId(page)}`);
  await audit.check(page);

  // Clone the flag: the name field has the focus; Enter clones; the clone's page follows.
  await page.getByRole("link", { name: "Clone", exact: true }).focus();
  await pressAndLoad(page, "Enter");
  await audit.check(page);
  if ((await focusedId(page)) !== "clone-name") fail("the clone form's name does not have the focus");
  await page.keyboard.press("Control+A");
  await page.keyboard.type(`${flag}-eu`);
  await pressAndLoad(page, "Enter");
  if (!page.url().endsWith(`/features/${flag}-eu`)) fail(`after cloning: ${page.url()}`);
  await page.getByRole("heading", { name: `${flag}-eu`, level: 1 }).waitFor();
  await checkpoint("cloned");
  await audit.check(page);

  if (problems.length > 0) fail(`script errors: ${problems.join("; ")}`);
  audit.finish();
  await browser.close();
  await checkpoint("done");
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
    process.exit(1);
  },
);
