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
