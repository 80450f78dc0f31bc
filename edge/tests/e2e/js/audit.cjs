// The accessibility audit every Chromium walk of the admin UI runs on every page it visits: axe-core (Deque's
// automated WCAG checker, pinned in scripts/test) with the WCAG 2.0 and 2.1 level A and AA rules, in the
// light and the dark theme (prefers-color-scheme), at 1280 px and at 390 px wide: four runs per page.
//
//   const audit = new Audit();
//   audit.watch(page);          // every page this tab loads must be audited before finish()
//   await audit.check(page);    // the four runs on the page as it is now; the tab is put back as it was
//   audit.finish();             // throws: every violation found, and every loaded page never checked
//
// The Firefox walk (puppeteer, which cannot switch the colour scheme over WebDriver BiDi) runs the same rules
// through violationsOn() and describe(), light theme, at both widths.
//
// The walk goes on after a violation, so one run lists every problem of every page; finish() fails the walk
// with one line per problem: the page, the theme and width, the rule id, its impact, the elements' selectors.
// The pages' Content-Security-Policy (default-src 'self') would refuse an injected <script>; page.evaluate
// runs the source through the DevTools protocol, which the policy does not govern.

const fs = require("node:fs");

const AXE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

// WCAG 2.0 and 2.1, levels A and AA: what issues 20 and 21 ask for. No rule is disabled.
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

const MODES = [
  { width: 1280, height: 900, scheme: "light" },
  { width: 1280, height: 900, scheme: "dark" },
  { width: 390, height: 844, scheme: "light" },
  { width: 390, height: 844, scheme: "dark" },
];

// A page, for "loaded but never audited", is its path: a query changes what a page lists, not its markup.
function pageOf(url) {
  return new URL(url).pathname;
}

function describe(url, mode, violation) {
  const targets = violation.nodes.map((node) => node.target.join(" ")).join(", ");
  const detail = violation.nodes[0] && violation.nodes[0].failureSummary
    ? ` (${violation.nodes[0].failureSummary.replace(/\s+/g, " ").trim()})`
    : "";
  return `${url} [${mode.scheme}, ${mode.width} px] ${violation.id} (${violation.impact}): ` +
    `${violation.help} at ${targets}${detail}`;
}

// axe's violations on the page as it is now: page.evaluate is playwright's or puppeteer's.
async function violationsOn(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE);
  return page.evaluate(
    async (tags) => {
      const result = await window.axe.run(document, { runOnly: { type: "tag", values: tags } });
      return result.violations.map(({ id, impact, help, nodes }) => ({
        id,
        impact,
        help,
        nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })),
      }));
    },
    TAGS,
  );
}

class Audit {
  constructor() {
    this.loaded = new Set();
    this.checked = new Set();
    this.problems = [];
  }

  // Records every page the tab loads (redirects included, as their final URL), to hold finish() to them.
  watch(page) {
    page.on("load", () => {
      if (page.url().startsWith("http")) this.loaded.add(pageOf(page.url()));
    });
  }

  async check(page) {
    const url = page.url();
    const viewport = page.viewportSize();
    const dark = await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches);
    for (const mode of MODES) {
      await page.setViewportSize({ width: mode.width, height: mode.height });
      await page.emulateMedia({ colorScheme: mode.scheme });
      for (const violation of await violationsOn(page)) this.problems.push(describe(url, mode, violation));
    }
    await page.setViewportSize(viewport);
    await page.emulateMedia({ colorScheme: dark ? "dark" : "light" });
    this.checked.add(pageOf(url));
  }

  finish() {
    const unchecked = [...this.loaded].filter((page) => !this.checked.has(page));
    const lines = this.problems.concat(unchecked.map((page) => `${page}: loaded but never audited`));
    if (lines.length > 0) {
      throw new Error(`accessibility audit (axe-core, WCAG 2.1 A/AA), ${lines.length} problem(s):\n  ${lines.join("\n  ")}`);
    }
  }
}

module.exports = { Audit, violationsOn, describe };
