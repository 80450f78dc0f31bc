// The admin UI on a phone (390 px) and without JavaScript, in Chromium through playwright-core, by role and
// accessible name (issue 30 §5 and "every page works with JavaScript off"). Run by edge/tests/e2e/ui_narrow.rs,
// which seeded flags (one with a long name) and a user before starting it.
//
// - 390 px, JavaScript on: the navigation is folded behind a "Menu" button (aria-expanded), which Enter opens
//   and Escape closes (the focus back on the button); no page scrolls sideways; on the flag list every
//   environment switch of the long-named flag is inside the screen; the long name breaks only after a hyphen.
// - JavaScript off: no Menu button, the navigation's links are there; every page of the navigation opens
//   without scrolling sideways; a switch on the flag list is flipped by its form, and the page that follows
//   says so in its notice (role status).
//
// Environment: VEXIL_URL, CHROMIUM, SCREENSHOTS, LONG_FLAG (the long-named flag). Prints {"checkpoint": "done"}.

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const folder = process.env.SCREENSHOTS;
const longFlag = process.env.LONG_FLAG;
const audit = new Audit();
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

async function signIn(page, audited) {
  await page.goto(base + "/login");
  if (audited) await audit.check(page);
  await page.getByLabel("Username").fill("anna");
  await page.getByLabel("Password").fill("correct horse battery");
  await page.getByLabel("Password").press("Enter");
  await page.waitForURL(/\/personal$/);
}

// Whether the page is wider than the screen (something scrolls the whole page sideways).
async function scrollsSideways(page) {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
}

// The paths of the navigation's links, as the signed-in page lists them.
async function navigationPaths(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("#main-nav a")].map((link) => new URL(link.href).pathname));
}

async function phone(browser) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  audit.watch(page);
  await signIn(page, true);
  await audit.check(page);

  const menu = page.getByRole("button", { name: "Menu" });
  expect(await menu.isVisible(), "no Menu button at 390 px");
  expect((await menu.getAttribute("aria-expanded")) === "false", "the menu starts open");
  expect(!(await page.getByRole("link", { name: "Segments" }).isVisible()), "the folded navigation shows");
  await menu.focus();
  await page.keyboard.press("Enter");
  expect((await menu.getAttribute("aria-expanded")) === "true", "Enter did not open the menu");
  await page.getByRole("link", { name: "Segments" }).waitFor({ state: "visible" });
  await page.screenshot({ path: `${folder}/narrow-menu-open-390.png` });
  await page.keyboard.press("Tab");
  await page.keyboard.press("Escape");
  expect((await menu.getAttribute("aria-expanded")) === "false", "Escape did not close the menu");
  expect(await menu.evaluate((button) => button === document.activeElement), "the focus is not back on Menu");
  expect(!(await scrollsSideways(page)), "the dashboard scrolls sideways");
  await page.screenshot({ path: `${folder}/narrow-dashboard-390.png`, fullPage: true });

  // Menu → Flags: the flag list.
  await page.keyboard.press("Enter");
  await page.getByRole("link", { name: "Flags", exact: true }).waitFor({ state: "visible" });
  await Promise.all([page.waitForURL(/\/projects\/default$/), page.getByRole("link", { name: "Flags", exact: true }).click()]);
  await audit.check(page);

  // The flag list as cards: every switch of the long-named flag on the screen, its name broken after hyphens.
  for (const environment of ["development", "production"]) {
    const toggle = page.getByRole("switch", { name: `${longFlag} in ${environment}`, exact: true });
    const box = await toggle.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390, `the ${environment} switch is off the screen`);
  }
  const breaks = await page.getByRole("link", { name: longFlag, exact: true }).evaluate((link) => {
    const text = link.firstChild;
    const range = document.createRange();
    const found = [];
    let top = null;
    for (let i = 0; i < text.length; i++) {
      range.setStart(text, i);
      range.setEnd(text, i + 1);
      const rect = range.getBoundingClientRect();
      if (top !== null && rect.top > top + 2) found.push(i);
      top = rect.top;
    }
    return found.map((i) => text.data[i - 1]);
  });
  expect(breaks.length > 0, "the long name fits one line: the test proves nothing");
  expect(breaks.every((before) => before === "-"), `the long name breaks inside a word: ${breaks}`);
  expect(!(await scrollsSideways(page)), "the flag list scrolls sideways");
  await page.screenshot({ path: `${folder}/narrow-flag-list-390.png`, fullPage: true });

  const wide = [];
  for (const path of await navigationPaths(page)) {
    await page.goto(base + path);
    if (await scrollsSideways(page)) wide.push(path);
    await audit.check(page);
  }
  await page.goto(base + `/projects/default/features/${longFlag}`);
  if (await scrollsSideways(page)) wide.push("the flag page");
  await audit.check(page);
  expect(wide.length === 0, `pages scrolling sideways at 390 px: ${wide.join(", ")}`);
  await context.close();
}

async function withoutJavaScript(browser) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
  const page = await context.newPage();
  await signIn(page);
  expect(!(await page.getByRole("button", { name: "Menu" }).isVisible()), "a Menu button that cannot open");
  expect(await page.getByRole("link", { name: "Segments" }).isVisible(), "no navigation without JavaScript");
  await page.screenshot({ path: `${folder}/narrow-no-js-390.png` });
  const failed = [];
  for (const path of await navigationPaths(page)) {
    const response = await page.goto(base + path);
    if (!response.ok()) failed.push(`${path}: ${response.status()}`);
    if (await scrollsSideways(page)) failed.push(`${path}: scrolls sideways`);
  }
  expect(failed.length === 0, `without JavaScript: ${failed.join(", ")}`);
  await page.goto(base + "/projects/default");
  await page.getByRole("switch", { name: `${longFlag} in development`, exact: true }).click();
  await page.waitForLoadState("load");
  const notice = page.getByRole("status").filter({ hasText: `${longFlag} switched on in development` });
  expect(await notice.isVisible(), "no notice after the switch");
  await page.screenshot({ path: `${folder}/narrow-no-js-switched-390.png`, fullPage: true });
  await context.close();
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM });
  try {
    await phone(browser);
    await withoutJavaScript(browser);
    audit.finish();
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify({ checkpoint: "done" }) + "\n");
  await lines.next();
}

main().then(() => process.exit(0), (error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
  process.exit(1);
});
