// The flag list and a flag's page at a glance (issue 30 §6) in a real browser: the list says per environment
// what a flag serves ("50% · 2 constraints", "on for everyone", "off"), a "change pending" badge links to the
// change request waiting there, and "Last changed" names who and when (also in the 390 px cards, where no
// page scrolls sideways). On the flag's page, by keyboard only: the same summary at the top of each
// environment; a tag typed too short is refused with what was typed kept, typed again and added with Enter;
// then Tab reaches its remove button ("Remove tag simple:beta") and Enter removes it. Last, the flag's star
// (Enter) makes it a favourite, listed first even sorted by name, and its star in the list unmarks it. Screenshots of the list
// and the page at 1280 and 390 px, light and dark, go to $SCREENSHOTS as flag-list-<page>-<width>-<theme>.png;
// every page is audited (audit.cjs). Run by edge/tests/e2e/ui_flag_list.rs, which checks the stored tags at
// the checkpoints "tagged", "favourite" and "done".
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder), FLAG (the flag
// with a 50% rollout and two constraints in development, a change request waiting in production).

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

// The page at both widths in both themes (audited in each), the tab put back at 1280 px, light.
async function shots4(page, name) {
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [width, height] of [[1280, 900], [390, 844]]) {
      await page.setViewportSize({ width, height });
      if (width === 390 && (await page.evaluate(() => document.documentElement.scrollWidth > innerWidth)))
        fail(`${name} scrolls sideways at 390 px`);
      await page.screenshot({ path: `${shots}/flag-list-${name}-${width}-${scheme}.png`, fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1280, height: 900 });
}

// Presses `key` and waits for the page it loads.
async function pressAndLoad(page, key) {
  await Promise.all([page.waitForEvent("load"), page.keyboard.press(key)]);
}

// The text of the cell labelled `label` in the row of `name`.
async function cellText(page, name, label) {
  const row = page.locator("tr", { has: page.getByRole("link", { name, exact: true }) });
  return (await row.locator(`td[data-label="${label}"]`).innerText()).replace(/\s+/g, " ").trim();
}

async function isFocused(locator) {
  return locator.evaluate((element) => element === document.activeElement);
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

  // The list: what each environment serves, the pending badge, who changed each flag last.
  const development = await cellText(page, flag, "development");
  if (!development.includes("50% · 2 constraints")) fail(`${flag} in development reads "${development}"`);
  const production = await cellText(page, flag, "production");
  if (!production.includes("off") || !production.includes("change pending"))
    fail(`${flag} in production reads "${production}"`);
  const badge = page.getByRole("link", { name: `change pending (change request #1 for ${flag} in production)`, exact: true });
  if ((await badge.count()) !== 1) {
    const named = await page.locator("a.badge.pending").evaluateAll((links) => links.map((link) => link.outerHTML));
    fail(`no change-pending link named for its flag and environment: ${named}`);
  }
  // alice switches dark-mode on in development (by keyboard): on for everyone there, and she changed it last.
  if (!(await cellText(page, "dark-mode", "development")).includes("off")) fail("dark-mode starts on");
  await page.getByRole("switch", { name: "dark-mode in development", exact: true }).focus();
  await pressAndLoad(page, "Enter");
  if (!(await cellText(page, "dark-mode", "development")).includes("on for everyone")) fail("dark-mode is not on for everyone");
  const changed = await cellText(page, "dark-mode", "Last changed");
  if (!/^alice · (just now|\d+ minutes? ago)$/.test(changed)) fail(`dark-mode last changed: "${changed}"`);
  const exact = await page
    .locator("tr", { has: page.getByRole("link", { name: "dark-mode", exact: true }) })
    .locator("td.last-changed time")
    .getAttribute("title");
  if (!/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/.test(exact || "")) fail(`the exact time: ${exact}`);
  // Sorted by the last change: dark-mode (switched on last) first.
  // The list follows the Sort select at once (vexil.js; Apply is for browsers without JavaScript).
  await page.getByLabel("Sort by").selectOption("changed");
  await page.waitForFunction(() => /sort=changed/.test(location.search));
  await page.waitForFunction(() => document.querySelector("td.flag-name a")?.textContent === "dark-mode");
  const first = await page.locator("td.flag-name a").first().innerText();
  if (first !== "dark-mode") fail(`sorted by last change, ${first} comes first`);
  await audit.check(page);
  await shots4(page, "list");
  // At 390 px the card shows the last change and the summaries, the switches on the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  const card = page.locator("tr", { has: page.getByRole("link", { name: flag, exact: true }) });
  if (!(await card.locator("td.last-changed").isVisible())) fail("the card does not show the last change");
  if (!(await card.locator('td[data-label="development"] .served').isVisible())) fail("the card hides the summary");
  const toggle = await card.getByRole("switch", { name: `${flag} in production` }).boundingBox();
  if (!toggle || toggle.x < 0 || toggle.x + toggle.width > 390) fail("the production switch is off the screen");
  await page.setViewportSize({ width: 1280, height: 900 });

  // The flag's page, by keyboard: the summary at the top of each environment.
  await page.getByRole("link", { name: flag, exact: true }).focus();
  await pressAndLoad(page, "Enter");
  await audit.check(page);
  const developmentCard = page.getByRole("region", { name: "development" });
  const summary = (await developmentCard.locator(".env-summary").innerText()).trim();
  if (summary !== "50% · 2 constraints") fail(`the development summary reads "${summary}"`);
  const productionCard = page.getByRole("region", { name: "production" });
  if ((await productionCard.getByRole("link", { name: /^change pending/ }).count()) !== 1)
    fail("no change-pending badge in production on the flag page");

  // A tag typed too short: refused beside its field, what was typed kept; typed again, added with Enter.
  const tags = page.getByRole("region", { name: "Tags" });
  const value = tags.getByLabel("Value");
  await value.focus();
  await page.keyboard.type("b");
  await pressAndLoad(page, "Enter");
  const refused = page.getByRole("region", { name: "Tags" }).getByLabel("Value");
  if ((await refused.inputValue()) !== "b") fail("the value typed was lost");
  if ((await refused.getAttribute("aria-invalid")) !== "true") fail("the refused value is not marked invalid");
  if ((await page.locator("#tag-value-error").innerText()).trim() === "") fail("no message beside the value");
  await audit.check(page);
  await refused.focus();
  await page.keyboard.press("End");
  await page.keyboard.type("eta");
  await pressAndLoad(page, "Enter");
  if (!page.url().endsWith(`/features/${flag}#tags`)) fail(`not back at the tags: ${page.url()}`);
  const remove = page.getByRole("button", { name: "Remove tag simple:beta", exact: true });
  if ((await remove.count()) !== 1) fail(`no remove button for simple:beta: ${await page.locator("#tags").innerText()}`);
  if ((await page.getByRole("status").filter({ hasText: "Tag simple:beta added" }).count()) !== 1)
    fail("no notice of the added tag");
  await audit.check(page);
  await shots4(page, "page");
  await checkpoint("tagged");

  // From the tags (where the page opened), Tab reaches the remove button; Enter removes the tag.
  await page.keyboard.press("Tab");
  if (!(await isFocused(remove))) fail("Tab from the tags did not reach Remove tag simple:beta");
  await pressAndLoad(page, "Enter");
  if ((await page.getByRole("button", { name: "Remove tag simple:beta" }).count()) !== 0) fail("the tag is still there");
  if ((await page.getByRole("region", { name: "Tags" }).getByText("No tags yet.").count()) !== 1) fail("no 'No tags yet.'");
  await audit.check(page);

  // Favourites: the star on the flag's page marks it (by keyboard, the focus back on the star), and the list
  // puts it first, even sorted by name.
  const star = page.getByRole("button", { name: `Favourite ${flag}`, exact: true });
  if ((await star.getAttribute("aria-pressed")) !== "false") fail("the flag starts as a favourite");
  await star.focus();
  await pressAndLoad(page, "Enter");
  const marked = page.getByRole("button", { name: `Favourite ${flag}`, exact: true });
  if ((await marked.getAttribute("aria-pressed")) !== "true") fail("the star did not mark the flag");
  if (!(await isFocused(marked))) fail("the focus did not come back to the star");
  if ((await page.getByRole("status").filter({ hasText: `${flag} is one of your favourites` }).count()) !== 1)
    fail("no notice of the favourite");
  await audit.check(page);
  await page.goto(base + "/projects/default?sort=name");
  const firstByName = await page.locator("td.flag-name a").first().innerText();
  if (firstByName !== flag) fail(`the favourite is not listed first: ${firstByName}`);
  await shots4(page, "favourite");
  await checkpoint("favourite");
  // Unmarked from the list: the list is in name order again.
  const listStar = page.getByRole("button", { name: `Favourite ${flag}`, exact: true });
  if ((await listStar.getAttribute("aria-pressed")) !== "true") fail("the list's star is not pressed");
  await listStar.focus();
  await pressAndLoad(page, "Enter");
  const again = await page.locator("td.flag-name a").first().innerText();
  if (again !== "dark-mode") fail(`after unmarking, ${again} comes first`);
  if ((await page.getByRole("button", { name: `Favourite ${flag}`, exact: true }).getAttribute("aria-pressed")) !== "false")
    fail("the star is still pressed");
  await audit.check(page);
  audit.finish();
  await browser.close();
  await checkpoint("done");
}

main().then(() => process.exit(0), (error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
  process.exit(1);
});
