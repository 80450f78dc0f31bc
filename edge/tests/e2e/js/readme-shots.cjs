// The README's pictures of the admin UI, taken from the real binaries with realistic data so that they show
// today's UI: the flag list, a flag's page, the strategy form (also at 390 px and dark) and the event log,
// 1280 px wide, light theme. Run by edge/tests/e2e/ui_readme.rs,
// which seeds the data through the admin API. Each page is also audited (audit.cjs) and checked to show what
// the picture is meant to show before it is taken.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), README_IMAGES (where the pictures go),
// FLAGS (the seeded flags' names, comma-separated), FLAG (the flag whose page is pictured).

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const images = process.env.README_IMAGES;
const flags = process.env.FLAGS.split(",");
const flag = process.env.FLAG;
const audit = new Audit();
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function fail(message) {
  throw new Error(message);
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    const page = await context.newPage();
    audit.watch(page);
    await page.goto(base + "/");
    await audit.check(page);
    await page.getByLabel("Username").fill("anna");
    await page.getByLabel("Password").fill("correct horse battery");
    await page.getByLabel("Password").press("Enter");
    // Signing in lands on the dashboard; Flags in the navigation opens the flag list.
    await page.waitForURL(/\/personal$/);
    await audit.check(page);
    await Promise.all([
      page.waitForURL(/\/projects\/default$/),
      page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flags", exact: true }).click(),
    ]);

    for (const name of flags) {
      if ((await page.getByRole("link", { name, exact: true }).count()) === 0)
        fail(`the flag list does not show ${name}`);
    }
    // What each environment serves in a few words, and the change request waiting (ui::flag_summary).
    for (const words of ["2 strategies", "100% · 1 segment", "change pending"]) {
      if ((await page.getByText(words).count()) === 0) fail(`the flag list does not show "${words}"`);
    }
    await audit.check(page);
    await page.screenshot({ path: `${images}/ui-flag-list.png` });

    await page.getByRole("link", { name: flag, exact: true }).click();
    await page.waitForURL(new RegExp(`/features/${flag}$`));
    if ((await page.getByRole("heading", { name: flag }).count()) === 0)
      fail(`the flag page has no heading ${flag}`);
    // Its strategies in words, each constraint as a chip (ui::vocabulary).
    for (const words of ["Nordic customers first · Gradual rollout", "25% of users, group " + flag, "country is one of NO, SE, DK"]) {
      if ((await page.getByText(words, { exact: true }).count()) === 0) fail(`the flag page does not show "${words}"`);
    }
    await audit.check(page);
    await page.screenshot({ path: `${images}/ui-flag-page.png` });

    // The strategy form of its first production strategy: the rollout's slider beside its number, the
    // constraint's field, operator and values; at 1280 and 390 px, light and dark.
    await Promise.all([
      page.waitForEvent("load"),
      page.getByRole("article", { name: "Strategy 1 in production" }).getByRole("link", { name: "Edit" }).click(),
    ]);
    const slider = page.getByRole("slider", { name: "Rollout slider" });
    if (!(await slider.isVisible()) || (await slider.inputValue()) !== "25") fail("the rollout slider does not show 25");
    if ((await page.getByLabel("Values").inputValue()) !== "NO\nSE\nDK") fail("the constraint's values are not shown");
    await audit.check(page);
    await page.screenshot({ path: `${images}/ui-strategy-form.png`, fullPage: true });
    for (const scheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [width, height] of [[1280, 800], [390, 844]]) {
        await page.setViewportSize({ width, height });
        await page.screenshot({ path: `${images}/ui-strategy-form-${width}-${scheme}.png`, fullPage: true });
      }
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize({ width: 1280, height: 800 });

    // The event log after anna switched a flag on from the list: one sentence per event, by day.
    await page.getByRole("link", { name: "Flags", exact: true }).click();
    await page.waitForURL(/\/projects\/default$/);
    await Promise.all([
      page.waitForEvent("load"),
      page.getByRole("switch", { name: "search-autocomplete in production" }).click(),
    ]);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Events" }).click();
    await page.waitForURL(/\/history$/);
    const today = page.getByRole("list", { name: "Today" });
    const switched = today.getByRole("listitem").filter({ hasText: "anna switched search-autocomplete on in production" });
    if ((await switched.count()) !== 1) fail("the event log does not say that anna switched search-autocomplete on");
    const rollout = today.getByRole("listitem").filter({ hasText: "added a gradual rollout of 50% to pricing-page-v2 in production" });
    if ((await rollout.count()) !== 1) fail("the event log does not say what rollout pricing-page-v2 got");
    await audit.check(page);
    await page.screenshot({ path: `${images}/ui-event-log.png` });
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
