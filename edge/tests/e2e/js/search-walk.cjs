// The one search of every page, in Chromium through playwright-core, as a person uses it: "/" focuses the
// header's search field, the words are typed and Enter pressed, Tab reaches the first result and Enter opens
// it; then a project's "Connect an SDK" page, a snippet copied by keyboard. Run by edge/tests/e2e/ui_narrow.rs (the_search_from_every_page), which seeded the flags it names.
//
// Environment: VEXIL_URL, CHROMIUM, SCREENSHOTS, WORDS (what to type), FLAG (the flag that must be found
// first). Prints {"checkpoint": "done"}.

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const folder = process.env.SCREENSHOTS;
const audit = new Audit();
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    audit.watch(page);
    await page.goto(base + "/login");
    await audit.check(page);
    await page.getByLabel("Username").fill("anna");
    await page.getByLabel("Password").fill("correct horse battery");
    await page.getByLabel("Password").press("Enter");
    await page.waitForURL(/\/personal$/);
    await audit.check(page);
    await page.keyboard.press("/");
    const field = page.getByRole("searchbox", { name: "Search everything" });
    expect(await field.evaluate((input) => input === document.activeElement), "/ did not focus the search");
    await page.keyboard.type(process.env.WORDS);
    await Promise.all([page.waitForURL(/\/search\?q=/), page.keyboard.press("Enter")]);
    await page.getByRole("status").filter({ hasText: /\d+ match/ }).waitFor();
    await audit.check(page);
    await page.screenshot({ path: `${folder}/search-results-1280.png`, fullPage: true });
    const first = page.getByRole("link", { name: process.env.FLAG, exact: true });
    await first.focus();
    await Promise.all([page.waitForURL(new RegExp(`/features/${process.env.FLAG}$`)), page.keyboard.press("Enter")]);
    await audit.check(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(base + "/search?q=" + encodeURIComponent(process.env.WORDS));
    const box = await page.getByRole("searchbox", { name: "Search everything" }).boundingBox();
    expect(box && box.width > 300, "the header's search is not full width at 390 px");
    await page.screenshot({ path: `${folder}/search-results-390.png`, fullPage: true });
    await audit.check(page);
    // A project's "Connect an SDK": its snippets are copied by keyboard.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(base + "/projects/default/connect");
    await audit.check(page);
    const copy = page.getByRole("button", { name: "Copy", description: /In the browser/ });
    await copy.focus();
    await page.keyboard.press("Enter");
    await page.locator(".snippet .copy-status").filter({ hasText: /Cop|Select/ }).first().waitFor();
    await page.screenshot({ path: `${folder}/connect-sdk-1280.png`, fullPage: true });
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
