// Vexil admin UI: small enhancements over forms that work without JavaScript. Loaded as a module from the
// binary itself (CSP default-src 'self'); no build step.

// A select marked data-autosubmit submits its form with the button it names (the strategy form shows the
// chosen strategy's parameters); without JavaScript that button is pressed by hand. Listened to on the
// document: a form redrawn in place (below) keeps it.
document.addEventListener("change", (event) => {
  const select = event.target;
  if (!(select instanceof HTMLSelectElement) || !select.matches("select[data-autosubmit]")) return;
  const button = document.getElementById(select.dataset.autosubmit);
  if (button && select.form) select.form.requestSubmit(button);
});

// The new-flag name is checked as it is typed, through the server's own rule (the same check as the API).
const nameInput = document.querySelector("input[data-validate-url]");
if (nameInput) {
  const message = document.getElementById(nameInput.id + "-error");
  let timer;
  nameInput.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const url = nameInput.dataset.validateUrl + "?name=" + encodeURIComponent(nameInput.value);
      try {
        const response = await fetch(url, { credentials: "same-origin" });
        const body = await response.json();
        if (message) message.textContent = body.message || "";
        nameInput.setAttribute("aria-invalid", body.message ? "true" : "false");
      } catch (_) {
        // The form is checked again when it is sent.
      }
    }, 250);
  });
}

// What a page or a form redrawn in place gets from the script:
// - With JavaScript the form redraws itself when the strategy or an operator changes: its "Update form"
//   button (for browsers without JavaScript) is not needed.
// - A percentage's slider (input type=range, hidden without JavaScript) is shown and kept in step with its
//   number field, which is the one the form sends.
function enhance(root) {
  const refresh = root.querySelector("#refresh-form");
  if (refresh && root.querySelector("select[data-autosubmit]")) refresh.hidden = true;
  for (const slider of root.querySelectorAll("input[type=range][data-mirrors]")) {
    const number = document.getElementById(slider.dataset.mirrors);
    if (!number) continue;
    slider.hidden = false;
    slider.addEventListener("input", () => {
      number.value = slider.value;
    });
    number.addEventListener("input", () => {
      if (number.value !== "") slider.value = number.value;
    });
  }
}
enhance(document);

// Forms that redraw themselves (data-redraw: the strategy form, a segment, a context field's legal values,
// a flag's variants, the playground's properties): their "Add …", "Remove" and "Update form" buttons
// (formnovalidate) send the form as without JavaScript, and the form of the page that comes back takes this
// one's place: no page load, the scroll kept. The focus goes where the server put it (autofocus: the new
// row's first field, or the row in a removed one's place) or, after an automatic redraw, back to the control
// that was changed. Any other answer: the form is sent the ordinary way.
async function redraw(form, submitter) {
  const data = new FormData(form);
  if (submitter.name) data.append(submitter.name, submitter.value);
  const body = new URLSearchParams(data);
  // Read as attributes: a control named "action" (the playground's buttons) hides the form's own properties.
  const action = new URL(form.getAttribute("action") || location.href, location.href);
  const post = (form.getAttribute("method") || "get").toLowerCase() === "post";
  const url = post ? action.href : action.origin + action.pathname + "?" + body;
  const automatic = submitter.hidden;
  // What is typed while the answer is on its way is kept: those controls' values go to the redrawn form.
  const typed = new Map();
  const note = (event) => {
    if (event.target.name) typed.set(event.target.name, event.target);
  };
  form.addEventListener("input", note);
  form.setAttribute("aria-busy", "true");
  let fresh = null;
  try {
    const init = post ? { method: "POST", body, credentials: "same-origin" } : { credentials: "same-origin" };
    const response = await fetch(url, init);
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    fresh = page.getElementById(form.id);
  } catch (_) {
    fresh = null;
  }
  if (!(fresh instanceof HTMLFormElement)) {
    form.removeAttribute("aria-busy");
    if (submitter.name) {
      const intent = document.createElement("input");
      intent.type = "hidden";
      intent.name = submitter.name;
      intent.value = submitter.value;
      form.append(intent);
    }
    form.submit();
    return;
  }
  form.removeEventListener("input", note);
  for (const [name, control] of typed) {
    const same = fresh.querySelector(`[name="${CSS.escape(name)}"]:not([type=hidden])`);
    if (!same || same.type !== control.type) continue;
    if (control.type === "checkbox") same.checked = control.checked;
    else same.value = control.value;
  }
  const active = document.activeElement;
  const changed = active && active !== document.body ? active.id : "";
  const marked = automatic ? null : fresh.querySelector("[autofocus]");
  const target = (marked && marked.id) || changed;
  for (const element of fresh.querySelectorAll("[autofocus]")) element.removeAttribute("autofocus");
  form.replaceWith(document.adoptNode(fresh));
  enhance(fresh);
  const next = target ? document.getElementById(target) : null;
  if (next) next.focus();
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  const submitter = event.submitter;
  if (!(form instanceof HTMLFormElement) || !form.id || !form.hasAttribute("data-redraw")) return;
  if (!submitter || !submitter.hasAttribute("formnovalidate")) return;
  event.preventDefault();
  redraw(form, submitter);
});

// The flag list follows its filters as they change: the list drawn for them (the page's own URL with the
// query) replaces what follows the filter form, the address bar shows that URL, and the count is said in a
// live region. Enter searches at once; the Apply button (for browsers without JavaScript) is hidden.
const filters = document.querySelector("form[data-live-search]");
if (filters) {
  for (const button of filters.querySelectorAll("[data-no-script]")) button.hidden = true;
  const count = document.getElementById("flag-count");
  let timer;
  let controller;
  const follow = async () => {
    const query = new URLSearchParams();
    for (const [name, value] of new FormData(filters)) if (value !== "") query.append(name, value);
    const action = new URL(filters.getAttribute("action") || location.href, location.href);
    const url = action.origin + action.pathname + (query.size > 0 ? "?" + query : "");
    if (controller) controller.abort();
    controller = new AbortController();
    let page;
    try {
      const response = await fetch(url, { credentials: "same-origin", signal: controller.signal });
      if (!response.ok) return;
      page = new DOMParser().parseFromString(await response.text(), "text/html");
    } catch (_) {
      return;
    }
    const fresh = page.querySelector("form[data-live-search]");
    if (!fresh) return;
    while (filters.nextSibling) filters.nextSibling.remove();
    const after = [];
    for (let node = fresh.nextSibling; node; node = node.nextSibling) after.push(node);
    for (const node of after) filters.parentNode.append(document.adoptNode(node));
    const subtitle = document.querySelector(".page-head .subtitle");
    const freshSubtitle = page.querySelector(".page-head .subtitle");
    if (subtitle && freshSubtitle) subtitle.replaceWith(document.adoptNode(freshSubtitle));
    history.replaceState(null, "", url);
    const total = Number(fresh.dataset.total);
    filters.dataset.total = String(total);
    if (count) count.textContent = total === 1 ? "1 flag matches." : `${total} flags match.`;
  };
  filters.addEventListener("input", (event) => {
    clearTimeout(timer);
    const typed = event.target instanceof HTMLInputElement;
    timer = setTimeout(follow, typed ? 250 : 0);
  });
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(timer);
    follow();
  });
}

// The project picker opens the project chosen (without JavaScript: its Open button).
for (const select of document.querySelectorAll("select[data-navigate]")) {
  const form = select.form;
  if (!form) continue;
  for (const button of form.querySelectorAll("[data-no-script]")) button.hidden = true;
  const hint = document.getElementById(select.id + "-hint");
  if (hint) hint.textContent = "Choosing a project opens it.";
  select.addEventListener("change", () => form.requestSubmit());
}

// Drag and drop of a flag's strategies in an environment (the Move up/Move down buttons do the same by
// keyboard): dropping a strategy on another posts its move form with the place it was dropped on.
for (const list of document.querySelectorAll("[data-strategies]")) {
  let dragged = null;
  for (const item of list.querySelectorAll("article[data-draggable]")) {
    item.draggable = true;
    item.addEventListener("dragstart", (event) => {
      dragged = item;
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", item.getAttribute("aria-label") || "");
    });
    item.addEventListener("dragover", (event) => {
      if (dragged && dragged !== item) event.preventDefault();
    });
    item.addEventListener("drop", (event) => {
      event.preventDefault();
      if (!dragged || dragged === item) return;
      const form = dragged.querySelector("form[data-move]");
      if (!form) return;
      const position = document.createElement("input");
      position.type = "hidden";
      position.name = "position";
      position.value = item.dataset.index;
      form.append(position);
      form.submit();
    });
  }
}

// A button marked data-copy copies the read-only field it names (a new token's secret) to the clipboard and
// says so; without the clipboard the field's text is selected for the person to copy.
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.addEventListener("click", async () => {
    const field = document.getElementById(button.dataset.copy);
    if (!field) return;
    const status = button.closest(".field")?.querySelector(".copy-status");
    try {
      await navigator.clipboard.writeText("value" in field ? field.value : field.textContent);
      if (status) status.textContent = "Copied to the clipboard.";
    } catch (_) {
      if ("select" in field) field.select();
      else window.getSelection().selectAllChildren(field);
      if (status) status.textContent = "Select and copy the secret (the clipboard is not available).";
    }
  });
}

// Narrow screens: the navigation folds behind the Menu button (without JavaScript it stays open). Escape closes
// it and gives the focus back to the button.
const menu = document.querySelector("button.menu-toggle");
const mainNav = document.getElementById("main-nav");
if (menu && mainNav) {
  document.documentElement.classList.add("has-menu");
  menu.hidden = false;
  const setOpen = (open) => {
    menu.setAttribute("aria-expanded", String(open));
    mainNav.classList.toggle("open", open);
  };
  menu.addEventListener("click", () => setOpen(menu.getAttribute("aria-expanded") !== "true"));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.getAttribute("aria-expanded") === "true") {
      setOpen(false);
      menu.focus();
    }
  });
}

// "/" anywhere but in a field goes to the header's search, as on many sites.
const globalSearch = document.getElementById("global-search");
if (globalSearch) {
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
    if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      globalSearch.focus();
    }
  });
}

// After a post-back the page comes back where it was: a form sent the ordinary way notes the scroll of the
// page it was sent from; the page drawn next, at the same path, scrolls there again. The control whose
// id the address's #fragment names (a flag's switch, carried by its form's `back`) gets the focus again.
const SCROLL_KEY = "vexil-scroll";
window.addEventListener("submit", (event) => {
  if (event.defaultPrevented) return;
  const here = { path: location.pathname, y: window.scrollY, at: Date.now() };
  try {
    sessionStorage.setItem(SCROLL_KEY, JSON.stringify(here));
  } catch (_) {
    // No session storage: the #fragment still brings the page near the control.
  }
});
{
  let restored = false;
  try {
    const saved = JSON.parse(sessionStorage.getItem(SCROLL_KEY) || "null");
    sessionStorage.removeItem(SCROLL_KEY);
    if (saved && saved.path === location.pathname && Date.now() - saved.at < 30000) {
      // Again once loaded: the browser's own scroll to the #fragment may come after this script.
      window.scrollTo(0, saved.y);
      window.addEventListener("load", () => window.scrollTo(0, saved.y), { once: true });
      restored = true;
    }
  } catch (_) {
    restored = false;
  }
  const named = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  if (named && named.matches("button, input, select, textarea, a[href]") && document.activeElement === document.body) {
    named.focus({ preventScroll: restored });
  }
}
