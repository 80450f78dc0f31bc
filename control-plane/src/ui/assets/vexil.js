// Vexil admin UI: small enhancements over forms that work without JavaScript. Loaded as a module from the
// binary itself (CSP default-src 'self'); no build step.

// A select marked data-autosubmit submits its form with the button it names (the strategy form shows the
// chosen strategy's parameters); without JavaScript that button is pressed by hand.
for (const select of document.querySelectorAll("select[data-autosubmit]")) {
  select.addEventListener("change", () => {
    const button = document.getElementById(select.dataset.autosubmit);
    if (button && select.form) select.form.requestSubmit(button);
  });
}

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

// With JavaScript the form redraws itself when the strategy or an operator changes: its "Update form" button
// (for browsers without JavaScript) is not needed.
const refresh = document.getElementById("refresh-form");
if (refresh && document.querySelector("select[data-autosubmit]")) refresh.hidden = true;

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
