// Memory Portal: progress for exports and imports (no inline script: CSP).
//
// Downloads. A download can't show progress, and "Export everything" fetches every memory
// before the first byte. So a link or GET form marked data-download sends a one-off token;
// it reads "Preparing your download…" until the portal answers with a cookie carrying that
// token (set with the file), or two minutes pass. Without JavaScript it simply downloads.
//
// Forms marked data-busy-form are aria-busy while they submit, with or without htmx.
(function () {
  "use strict";
  if (window.memoryPortalTransfer) return; // several templates may load this file
  window.memoryPortalTransfer = true;

  var COOKIE = "download_ready";
  var GIVE_UP_MS = 120000;

  function readyToken() {
    var match = document.cookie.match(/(?:^|;\s*)download_ready=([A-Za-z0-9]+)/);
    return match ? match[1] : null;
  }

  function newToken() {
    var bytes = new Uint8Array(12);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map
      .call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); })
      .join("");
  }

  // Shows "Preparing…" on `control` until the download with `token` begins; `done` undoes
  // whatever carried the token.
  function preparing(control, token, done) {
    var label = control.textContent;
    control.setAttribute("aria-busy", "true");
    control.textContent = "Preparing your download…";
    var started = Date.now();
    var timer = window.setInterval(function () {
      if (readyToken() === token || Date.now() - started > GIVE_UP_MS) {
        window.clearInterval(timer);
        document.cookie = COOKIE + "=; Max-Age=0; path=/; SameSite=Strict";
        control.textContent = label;
        control.removeAttribute("aria-busy");
        done();
      }
    }, 300);
  }

  function plainClick(event) {
    return event.button === 0 && !(event.metaKey || event.ctrlKey || event.shiftKey || event.altKey);
  }

  // <a data-download>: the token goes into the link, which the browser reads after this.
  document.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-download]");
    if (!link) return;
    if (link.getAttribute("aria-busy") === "true") {
      event.preventDefault(); // already preparing: don't start a second export
      return;
    }
    if (!plainClick(event)) return;
    var token = newToken();
    var url = new URL(link.href, window.location.href);
    url.searchParams.set("download_token", token);
    link.href = url.toString();
    preparing(link, token, function () {
      url.searchParams.delete("download_token");
      link.href = url.toString();
    });
  });

  // <form method="get" data-download>: the token goes into a hidden field.
  document.addEventListener("submit", function (event) {
    var form = event.target.closest("form[data-download]");
    if (!form) return;
    var button = event.submitter || form.querySelector("button");
    if (button && button.getAttribute("aria-busy") === "true") {
      event.preventDefault();
      return;
    }
    var field = document.createElement("input");
    field.type = "hidden";
    field.name = "download_token";
    field.value = newToken();
    form.appendChild(field);
    if (button) preparing(button, field.value, function () { field.remove(); });
  });

  document.addEventListener("submit", function (event) {
    var form = event.target.closest("form[data-busy-form]");
    if (!form) return;
    form.setAttribute("aria-busy", "true");
    var button = event.submitter || form.querySelector("button[type='submit']");
    if (button) button.setAttribute("aria-busy", "true");
  });

  function idle(root) {
    root.querySelectorAll("form[data-busy-form][aria-busy], form[data-busy-form] [aria-busy]")
      .forEach(function (element) { element.removeAttribute("aria-busy"); });
  }

  // htmx swaps a new form in on success and error alike; this covers a request that fails
  // without a swap. Coming back with the Back button shows the page as it was left.
  document.addEventListener("htmx:afterRequest", function () { idle(document); });
  window.addEventListener("pageshow", function () { idle(document); });
})();
