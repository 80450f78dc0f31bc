// The access pages of the admin web UI in a real browser (playwright-core driving Debian's chromium), by role
// and accessible name: an Admin creates a frontend token and reads its secret from the "Secret" field, then
// revokes it; creates an Editor user; the Editor, in a browser context of their own, finds the tokens and
// users pages not editable and changes their own password on the profile page, then signs in with it.
// Run by edge/tests/e2e/ui_access.rs: at each checkpoint this prints one JSON line {"checkpoint": NAME, ...}
// and waits for a line "continue" on stdin while the test asks the edge. Screenshots (access-*.png, 1280 px
// and 390 px wide) go to $SCREENSHOTS.
//
// Environment: VEXIL_URL (the control plane), CHROMIUM (the browser), SCREENSHOTS (a folder).

const { chromium } = require("playwright-core");
const readline = require("node:readline");
const { Audit } = require("./audit.cjs");

const base = process.env.VEXIL_URL;
const shots = process.env.SCREENSHOTS;
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a brand new secret phrase";
const audit = new Audit();

async function checkpoint(name, detail = {}) {
  process.stdout.write(JSON.stringify({ checkpoint: name, ...detail }) + "\n");
  const answer = await input.next();
  if (answer.done || answer.value.trim() !== "continue") throw new Error(`stopped at ${name}: ${answer.value}`);
}

function fail(message) {
  throw new Error(message);
}

async function shot(page, name) {
  await page.screenshot({ path: `${shots}/access-${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/access-${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await audit.check(page);
}

// Clicks something that loads a page and waits for it.
async function navigate(page, locator) {
  await Promise.all([page.waitForEvent("load"), locator.click()]);
}

async function signIn(page, username, password, landing) {
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await navigate(page, page.getByRole("button", { name: "Sign in" }));
  if (!landing.test(page.url())) fail(`${username} landed on ${page.url()}`);
}

// A context whose pages report console errors and failed loads, except the 403 pages the walk expects.
async function watchedPage(browser, errors, expected403) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const page = await context.newPage();
  audit.watch(page);
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().includes("403")) errors.push(message.text());
  });
  page.on("response", (response) => {
    const path = new URL(response.url()).pathname;
    if (response.status() >= 400 && !(response.status() === 403 && expected403.includes(path)))
      errors.push(`${response.status()} ${response.url()}`);
  });
  return page;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  const errors = [];
  const page = await watchedPage(browser, errors, []);

  // An Admin creates a frontend token for development.
  await page.goto(base + "/login?next=%2F");
  await audit.check(page);
  await signIn(page, "alice", PASSWORD, /\/personal$/);
  await audit.check(page);
  await navigate(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API tokens" }));
  await shot(page, "01-tokens");
  await navigate(page, page.getByRole("link", { name: "New token" }));
  await audit.check(page);
  await page.getByLabel("Token name").fill("web-shop");
  await page.getByLabel("Token type").selectOption("frontend");
  await page.getByLabel("Environment").selectOption("development");
  await page.getByLabel("Projects").selectOption(["*"]);
  await navigate(page, page.getByRole("button", { name: "Create token" }));
  const secretField = page.getByLabel("Secret");
  if ((await secretField.getAttribute("readonly")) === null) fail("the Secret field is not read-only");
  const secret = await secretField.inputValue();
  if (!secret.startsWith("*:development.")) fail(`unexpected secret ${secret}`);
  // Copy, by keyboard: the clipboard then holds the secret.
  await page.getByRole("button", { name: "Copy" }).focus();
  await page.keyboard.press("Enter");
  await page.getByText("Copied to the clipboard.").waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  if (copied !== secret) fail("Copy did not put the secret on the clipboard");
  await shot(page, "02-token-created");
  await checkpoint("token-created", { secret });

  // Revoke it, after the confirmation page.
  await page.goto(base + "/admin/api");
  if ((await page.content()).includes(secret)) fail("the list shows the secret again");
  await navigate(page, page.getByRole("button", { name: "Revoke web-shop" }));
  await page.getByRole("heading", { name: "Revoke web-shop?" }).waitFor();
  await shot(page, "03-revoke-confirm");
  await navigate(page, page.getByRole("button", { name: "Revoke token" }));
  await page.getByText("The token was revoked").waitFor();
  if ((await page.getByRole("button", { name: "Revoke web-shop" }).count()) !== 0) fail("the token is still listed");
  await checkpoint("token-revoked", { secret });

  // An Editor user, created in the UI.
  await navigate(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Users" }));
  await navigate(page, page.getByRole("link", { name: "New user" }));
  await page.getByLabel("Username").fill("eddie");
  await page.getByLabel("Name", { exact: true }).fill("Eddie Editor");
  await page.getByLabel("Email").fill("eddie@example.com");
  await page.getByLabel("Root role").selectOption({ label: "Editor" });
  await page.getByLabel("Password").fill(PASSWORD);
  await shot(page, "04-new-user");
  await navigate(page, page.getByRole("button", { name: "Create user" }));
  await page.getByRole("cell", { name: "Eddie Editor", exact: true }).waitFor();
  await shot(page, "05-users");
  // A group with the Editor in it.
  await navigate(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Groups" }));
  await navigate(page, page.getByRole("link", { name: "New group" }));
  await page.getByLabel("Name", { exact: true }).fill("release managers");
  await page.getByLabel("Root role").selectOption({ label: "Editor" });
  await page.getByLabel("Eddie Editor").check();
  await audit.check(page);
  await navigate(page, page.getByRole("button", { name: "Save group" }));
  await page.getByRole("cell", { name: "release managers", exact: true }).waitFor();
  await shot(page, "06-groups");
  await checkpoint("editor-created");

  // The Editor, in a browser of their own: tokens and users are not editable.
  const editorErrors = [];
  const editor = await watchedPage(browser, editorErrors, ["/admin/api", "/admin/users"]);
  await editor.goto(base + "/login?next=%2Fprofile");
  await signIn(editor, "eddie", PASSWORD, /\/profile$/);
  await audit.check(editor);
  const nav = editor.getByRole("navigation", { name: "Main" });
  if ((await nav.getByRole("link", { name: "API tokens" }).count()) !== 0) fail("an Editor sees the API tokens link");
  if ((await nav.getByRole("link", { name: "Users" }).count()) !== 0) fail("an Editor sees the Users link");
  for (const path of ["/admin/api", "/admin/users"]) {
    const answer = await editor.goto(base + path);
    if (answer.status() !== 403) fail(`${path} answered ${answer.status()} to an Editor`);
    await editor.getByRole("heading", { name: "Not allowed" }).waitFor();
    if ((await editor.getByRole("button", { name: "Create token" }).count()) !== 0) fail(`${path}: Create token shown`);
    if ((await editor.getByRole("link", { name: "New user" }).count()) !== 0) fail(`${path}: New user shown`);
  }
  await shot(editor, "07-editor-refused");

  // The Editor's profile: a personal access token, then a new password.
  await navigate(editor, editor.getByRole("link", { name: "Profile" }));
  await editor.getByLabel("Description").fill("laptop cli");
  const nextYear = new Date(Date.now() + 365 * 86400000).toISOString().slice(0, 10);
  await editor.getByLabel("Expires on").fill(nextYear);
  await navigate(editor, editor.getByRole("button", { name: "Create personal access token" }));
  const pat = await editor.getByLabel("Secret").inputValue();
  if (!pat.startsWith("user:")) fail(`unexpected personal access token ${pat}`);
  await shot(editor, "08-profile");
  await editor.getByLabel("Current password").fill(PASSWORD);
  await editor.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
  await editor.getByLabel("Confirm new password").fill(NEW_PASSWORD);
  await navigate(editor, editor.getByRole("button", { name: "Change password" }));
  if (!editor.url().includes("/login")) fail(`after the change: ${editor.url()}`);
  await signIn(editor, "eddie", NEW_PASSWORD, /\/profile$/);
  await editor.getByText("Eddie Editor").first().waitFor();
  await checkpoint("password-changed", { pat });

  // The Admin's views of a user and of a group.
  await page.goto(base + "/admin/users");
  await navigate(page, page.getByRole("link", { name: "Edit Eddie Editor" }));
  if ((await page.getByLabel("Root role", { exact: true }).inputValue()) !== "2") fail("the user page does not show Editor");
  await shot(page, "09-user-page");
  await page.goto(base + "/admin/groups");
  await navigate(page, page.getByRole("link", { name: "Edit release managers" }));
  if (!(await page.getByLabel("Eddie Editor").isChecked())) fail("the group form lost its member");
  await shot(page, "10-group-form");
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto(base + "/admin/api");
  await shot(page, "11-tokens-dark");

  const all = errors.concat(editorErrors);
  if (all.length > 0) fail(`errors: ${all.join("; ")}`);
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
