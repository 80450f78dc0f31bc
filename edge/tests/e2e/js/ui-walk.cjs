// The admin web UI in a real browser (Debian's chromium driven by playwright-core, both installed by
// scripts/test), walked by role and accessible name as a person would. Run by edge/tests/e2e/ui.rs, which
// checks the edge's answers between steps: at each checkpoint this prints one JSON line
// {"checkpoint": NAME} and waits for one line on stdin before going on. Screenshots of every page visited,
// at 1280 px and 390 px wide, go to $SCREENSHOTS.
//
// Every page visited is audited (audit.cjs: axe-core, both themes, both widths), and the flag list is walked
// once by keyboard alone.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder).

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const shots = process.env.SCREENSHOTS;
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

async function shot(page, name) {
  await page.screenshot({ path: `${shots}/${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

// Clicks a control that submits a form and waits for the page it leads to.
async function submit(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
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

// Presses Tab from the top of the page until each of `targets` ({name: locator}) has had the focus (at most
// 80 presses). Every element the focus lands on must show it: it matches :focus-visible and its computed
// outline or box-shadow is not none.
async function tabThrough(page, targets) {
  const missing = new Map(Object.entries(targets));
  for (let presses = 0; presses < 80 && missing.size > 0; presses++) {
    await page.keyboard.press("Tab");
    const focus = await page.evaluate(() => {
      const element = document.activeElement;
      const style = getComputedStyle(element);
      return {
        element: element.outerHTML.slice(0, 120),
        visible: element.matches(":focus-visible"),
        outline: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0,
        shadow: style.boxShadow !== "none",
      };
    });
    if (!focus.visible || !(focus.outline || focus.shadow))
      fail(`the keyboard focus does not show on ${focus.element}: ${JSON.stringify(focus)}`);
    for (const [name, target] of missing) {
      if (await target.evaluate((element) => element === document.activeElement)) missing.delete(name);
    }
  }
  if (missing.size > 0) fail(`Tab never reached ${[...missing.keys()].join(", ")} on ${page.url()}`);
}

async function signIn(page, username, password) {
  await page.goto(base + "/");
  if (!page.url().includes("/login")) fail(`not sent to the sign-in page: ${page.url()}`);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  // Signing in lands on the dashboard; Flags in the navigation opens the flag list.
  await page.waitForURL(/\/personal$/);
  await audit.check(page);
  await Promise.all([page.waitForURL(/\/projects\/default$/), page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flags", exact: true }).click()]);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  audit.watch(page);
  const errors = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  // Every page and resource the browser loads answers (error pages are not part of this walk).
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });

  await page.goto(base + "/login");
  await shot(page, "01-sign-in");
  await signIn(page, "alice", "correct horse battery");
  await shot(page, "02-flags-empty");

  // Create a flag.
  await page.getByRole("link", { name: "New flag" }).click();
  // The name is checked as it is typed, by the server's rule.
  await page.getByLabel("Name").fill("bad name");
  await page.locator("#name-error").getByText("must be URL-safe").waitFor();
  await page.getByLabel("Name").fill("checkout-v2");
  await page.locator("#name-error:empty").waitFor({ state: "attached" });
  await page.getByLabel("Type").selectOption("release");
  await page.getByLabel("Description").fill("The new checkout <script>alert(1)</script>");
  await shot(page, "03-new-flag");
  await page.getByRole("button", { name: "Create flag" }).click();
  await page.waitForURL(/\/projects\/default\/features\/checkout-v2(#[\w-]+)?$/);
  if (!(await page.getByRole("paragraph").filter({ hasText: "The new checkout <script>alert(1)</script>" }).isVisible()))
    fail("the description is not shown as text");

  // flexibleRollout 50 % with country IN [NO, SE] in development.
  await page.getByRole("link", { name: "Add strategy to development" }).click();
  if ((await page.getByLabel("Strategy").inputValue()) !== "flexibleRollout") fail("not flexibleRollout");
  await page.getByLabel("Rollout", { exact: true }).fill("50");
  await page.getByLabel("Stickiness").selectOption("userId");
  await inPlace(page, () => page.getByRole("button", { name: "Add constraint" }).click());
  await page.getByLabel("Context field").fill("country");
  await inPlace(page, () => page.getByLabel("Operator").selectOption("IN"));
  await page.getByLabel("Values").fill("NO, SE");
  if ((await page.getByLabel("Rollout", { exact: true }).inputValue()) !== "50") fail("the rollout typed was lost");
  await shot(page, "04-strategy-form");
  // Enter in a text field presses the form's first submit button: it saves (the constraint is kept, the edge
  // checks it at rollout-50), never "Remove constraint 1".
  await page.getByLabel("Context field").press("Enter");
  await page.waitForURL(/\/features\/checkout-v2(#[\w-]+)?$/);

  // Switch it on.
  const devSwitch = page.getByRole("switch", { name: "Enabled in development" });
  if ((await devSwitch.getAttribute("aria-checked")) !== "false") fail("on before the switch");
  await submit(page, devSwitch);
  if ((await page.getByRole("switch", { name: "Enabled in development" }).getAttribute("aria-checked")) !== "true")
    fail("the switch did not turn on");
  await shot(page, "05-flag-on");
  await checkpoint("rollout-50");

  // Edit the rollout to 100 %.
  const first = page.getByRole("article", { name: "Strategy 1 in development" });
  await first.getByRole("link", { name: "Edit" }).click();
  // A context field name the domain refuses: the form comes back (400) with the domain's message as the
  // field's accessible description, and what was typed kept.
  const before = errors.length;
  await page.getByLabel("Context field").fill("bad name");
  await submit(page, page.getByRole("button", { name: "Save strategy" }));
  const contextField = page.getByLabel("Context field");
  if ((await contextField.getAttribute("aria-invalid")) !== "true") fail("the context field is not marked invalid");
  const describedBy = (await contextField.getAttribute("aria-describedby")) || "";
  const description = (
    await Promise.all(describedBy.split(/\s+/).filter(Boolean).map((id) => page.locator(`[id="${id}"]`).textContent()))
  ).join(" ");
  // Worded for people: the field's label, not the API's path (constraints[0].contextName).
  if (!description.includes("Context field must be URL-safe") || description.includes("constraints["))
    fail(`the context field's description: ${description}`);
  if ((await contextField.inputValue()) !== "bad name") fail("the context field typed was lost");
  await shot(page, "05b-strategy-refused");
  // That refusal answered 400 (the browser also logs it), as it should; nothing else failed.
  const refused = errors.splice(before);
  const expected = (entry) =>
    (entry.startsWith("400 ") && entry.endsWith("/strategies/edit")) || entry.includes("status of 400");
  if (!refused.some((entry) => entry.startsWith("400 ")) || !refused.every(expected))
    fail(`unexpected answers: ${refused.join("; ")}`);
  await page.getByLabel("Context field").fill("country");
  await page.getByLabel("Rollout", { exact: true }).fill("100");
  await audit.check(page);
  await page.getByRole("button", { name: "Save strategy" }).click();
  await page.waitForURL(/\/features\/checkout-v2(#[\w-]+)?$/);
  await checkpoint("rollout-100");

  // A second strategy (user ids, chosen in the Strategy list), then move it up.
  await page.getByRole("link", { name: "Add strategy to development" }).click();
  await page.getByLabel("Strategy").selectOption("userWithId");
  await page.getByLabel("User IDs").waitFor();
  await page.getByLabel("User IDs").fill("vip-1, vip-2");
  await page.getByRole("button", { name: "Save strategy" }).click();
  await page.waitForURL(/\/features\/checkout-v2(#[\w-]+)?$/);
  const second = page.getByRole("article", { name: "Strategy 2 in development" });
  if (!(await second.textContent()).includes("User IDs: vip-1, vip-2")) fail("the second strategy is not User IDs");
  await submit(page, second.getByRole("button", { name: "Move up" }));
  if (!(await page.getByRole("article", { name: "Strategy 1 in development" }).textContent()).includes("User IDs"))
    fail("Move up did not reorder");
  await shot(page, "06-two-strategies");
  await page.screenshot({ path: `${shots}/readme-flag-page.png` });
  await checkpoint("reordered");
  // Drag and drop: the flexibleRollout back on top.
  await Promise.all([
    page.waitForEvent("load"),
    page
      .getByRole("article", { name: "Strategy 2 in development" })
      .dragTo(page.getByRole("article", { name: "Strategy 1 in development" })),
  ]);
  if (!(await page.getByRole("article", { name: "Strategy 1 in development" }).textContent()).includes("Gradual rollout"))
    fail("drag and drop did not reorder");

  // A segment, made on the Segments page, used in the flexibleRollout strategy.
  await page.getByRole("link", { name: "Segments", exact: true }).click();
  await page.getByRole("link", { name: "New segment" }).click();
  // "Add constraint" only redraws the form: the Name it requires is not asked for yet.
  await inPlace(page, () => page.getByRole("button", { name: "Add constraint" }).click());
  await page.getByLabel("Name").fill("nordics");
  await page.getByLabel("Context field").fill("country");
  await inPlace(page, () => page.getByLabel("Operator").selectOption("IN"));
  await page.getByLabel("Values").fill("NO, SE, DK, FI");
  await audit.check(page);
  // Enter in the constraint's context field saves the segment with its constraint.
  await page.getByLabel("Context field").press("Enter");
  await page.waitForURL(base + "/segments");
  const saved = await page.getByRole("row").filter({ hasText: "nordics" }).textContent();
  if (!saved.includes("country is one of NO, SE, DK, FI")) fail(`the segment lost its constraint: ${saved}`);
  await page.goto(base + "/projects/default/features/checkout-v2");
  await page.getByRole("article", { name: "Strategy 1 in development" }).getByRole("link", { name: "Edit" }).click();
  await page.getByLabel("nordics").check();
  await page.getByRole("button", { name: "Save strategy" }).click();
  await page.waitForURL(/\/features\/checkout-v2(#[\w-]+)?$/);
  if (!(await page.getByRole("article", { name: "Strategy 1 in development" }).textContent()).includes("nordics"))
    fail("the segment is not shown on the strategy");
  await page.getByRole("link", { name: "Segments", exact: true }).click();
  if (!(await page.getByRole("table").textContent()).includes("checkout-v2 (development)"))
    fail("the segments page does not say where nordics is used");
  await shot(page, "07-segments");
  await page.goBack();
  await checkpoint("segment");

  // Variants with a JSON payload.
  await page.getByRole("link", { name: "Edit variants in development" }).click();
  await inPlace(page, () => page.getByRole("button", { name: "Add variant" }).click());
  await page.getByLabel("Variant name").fill("blue");
  await page.getByLabel("Payload type").selectOption("json");
  await page.getByLabel("Payload", { exact: true }).fill('{"color": "blue"}');
  await shot(page, "08-variants");
  await page.getByRole("button", { name: "Save variants" }).click();
  await page.waitForURL(/\/features\/checkout-v2(#[\w-]+)?$/);
  await checkpoint("variants");

  // A dependency on another flag (off in development): SDKs no longer get checkout-v2.
  await page.getByRole("link", { name: "Flags", exact: true }).click();
  await page.getByRole("link", { name: "New flag" }).click();
  await page.getByLabel("Name").fill("launch-gate");
  await page.getByRole("button", { name: "Create flag" }).click();
  await page.waitForURL(/\/features\/launch-gate$/);
  await audit.check(page);
  await page.goto(base + "/projects/default/features/checkout-v2");
  await page.getByLabel("Parent flag").fill("launch-gate");
  await page.getByLabel("Parent state").selectOption("enabled");
  await page.getByRole("button", { name: "Add dependency" }).click();
  await page.waitForURL(/\/features\/checkout-v2#dependencies$/);
  await page.getByRole("button", { name: "Remove dependency on launch-gate" }).waitFor();
  await audit.check(page);
  await shot(page, "08b-dependency");
  await checkpoint("dependency");

  // A link to the flag's ticket: the links page, typed, Enter; the flag page lists it by its title.
  await submit(page, page.getByRole("link", { name: "Add or change links" }));
  await audit.check(page);
  await page.getByLabel("Address").fill("https://tickets.example.com/PAY-1");
  await page.getByLabel("Title").fill("Ticket PAY-1");
  await Promise.all([page.waitForEvent("load"), page.getByLabel("Title").press("Enter")]);
  await page.getByRole("status").filter({ hasText: "Link Ticket PAY-1 added." }).waitFor();
  await shot(page, "08c-links");
  await submit(page, page.getByRole("link", { name: "← checkout-v2" }));
  await page.getByRole("list", { name: "Links of this flag" }).getByRole("link", { name: "Ticket PAY-1" }).waitFor();
  await checkpoint("link");

  // Archive with a confirmation, then revive.
  await page.getByRole("link", { name: "Archive flag" }).click();
  await page.getByRole("button", { name: "Confirm" }).waitFor();
  await audit.check(page);
  await page.getByRole("button", { name: "Confirm" }).click();
  await page.waitForURL(base + "/archive");
  await shot(page, "11-archive");
  await checkpoint("archived");
  await page.getByRole("button", { name: "Revive checkout-v2" }).click();
  await page.waitForURL(/\/features\/checkout-v2(#[\w-]+)?$/);
  await checkpoint("revived");

  // Change requests are now on in production (the test turned them on): the switch makes a draft.
  await page.reload();
  // A protected environment: the switch makes a change request draft.
  await submit(page, page.getByRole("switch", { name: "Enabled in production" }));
  if (!(await page.getByRole("status").textContent()).includes("change request #"))
    fail("no change request notice");
  await shot(page, "09-change-request");
  await checkpoint("change-request");

  // The flag list: search, and the row's switches.
  await page.getByRole("link", { name: "Flags", exact: true }).click();
  // The list follows the search as it is typed (no Apply with JavaScript).
  await page.getByRole("searchbox", { name: "Search flags" }).fill("checkout");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("query") === "checkout");
  await page.getByRole("switch", { name: "checkout-v2 in development" }).waitFor();
  await shot(page, "10-flags");

  // By keyboard alone, from the top of the flag list: Tab reaches the search box, "New flag" and a row's
  // switch, the focus showing on every stop; Space on the switch turns it over, and back.
  for (let turn = 0; turn < 2; turn++) {
    await page.goto(base + "/projects/default");
    const rowSwitch = page.getByRole("switch", { name: "checkout-v2 in development" });
    const expected = (await rowSwitch.getAttribute("aria-checked")) === "true" ? "false" : "true";
    await tabThrough(page, {
      "the search box": page.getByRole("searchbox", { name: "Search flags" }),
      "the New flag link": page.getByRole("link", { name: "New flag" }),
      "the switch checkout-v2 in development": rowSwitch,
    });
    if (!(await rowSwitch.evaluate((element) => element === document.activeElement)))
      fail("the row's switch is not the last of the three Tab reaches");
    await Promise.all([page.waitForEvent("load"), page.keyboard.press("Space")]);
    const state = await page.getByRole("switch", { name: "checkout-v2 in development" }).getAttribute("aria-checked");
    if (state !== expected) fail(`Space on the row's switch left it at ${state}, not ${expected}`);
  }
  await page.getByRole("link", { name: "checkout-v2", exact: true }).click();
  await shot(page, "12-flag-page");

  // A Viewer: no edit controls, and a forged POST answers 403.
  const viewerContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const viewer = await viewerContext.newPage();
  audit.watch(viewer);
  await signIn(viewer, "vera", "correct horse battery");
  await viewer.goto(base + "/projects/default/features/checkout-v2");
  if ((await viewer.getByRole("switch").count()) !== 0) fail("a Viewer sees switches");
  if ((await viewer.getByRole("link", { name: /Add strategy/ }).count()) !== 0) fail("a Viewer sees Add strategy");
  if ((await viewer.getByRole("button", { name: "Save settings" }).count()) !== 0) fail("a Viewer sees settings");
  await shot(viewer, "13-viewer");
  const csrf = await viewer.locator('input[name="csrf"]').first().inputValue();
  const forged = await viewer.request.post(
    base + "/projects/default/features/checkout-v2/environments/development/switch",
    { form: { csrf, enabled: "true" }, maxRedirects: 0 },
  );
  if (forged.status() !== 403) fail(`a Viewer's forged POST answered ${forged.status()}`);

  if (errors.length > 0) fail(`console errors: ${errors.join("; ")}`);
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
