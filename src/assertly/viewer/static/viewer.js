// assertly view: the one script of the viewer's pages (the CSP allows no other).
// - A run still being written (or still being counted) refreshes its page every two seconds,
//   keeping the tests that are open open.
// - An exported page (no server to filter) filters its tests here, from the URL's parameters.
// Agent output is never turned into markup: this script only moves nodes the server escaped,
// and compares text with textContent.
"use strict";

(function () {
  const body = document.body;

  function openKeys() {
    return new Set(
      Array.from(document.querySelectorAll("details.test[open]")).map((d) => d.dataset.key)
    );
  }

  async function refresh() {
    let response;
    try {
      response = await fetch(location.href, { headers: { Accept: "text/html" }, cache: "no-store" });
    } catch (_) {
      return true; // the server may be restarting: try again later
    }
    if (!response.ok) return true;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    const open = openKeys();
    for (const id of ["run-header", "live", "shown", "test-list"]) {
      const now = document.getElementById(id);
      const next = fresh.getElementById(id);
      if (now && next) now.replaceWith(document.adoptNode(next));
    }
    for (const d of document.querySelectorAll("details.test")) {
      if (open.has(d.dataset.key)) d.open = true;
    }
    return fresh.body.hasAttribute("data-refresh");
  }

  function startRefresh() {
    const every = Number(body.dataset.refresh) || 2000;
    const tick = async () => {
      if (await refresh()) setTimeout(tick, every);
    };
    setTimeout(tick, every);
  }

  function staticFilters() {
    const form = document.getElementById("filters");
    if (!form) return;
    const apply = () => {
      const params = new URLSearchParams(location.search);
      const statuses = (params.get("status") || "").split(",").filter(Boolean);
      const suite = params.get("suite") || "";
      const tag = params.get("tag") || "";
      const q = (params.get("q") || "").toLowerCase();
      for (const name of ["status", "suite", "tag", "q"]) {
        if (form.elements[name]) form.elements[name].value = params.get(name) || "";
      }
      let shown = 0;
      for (const d of document.querySelectorAll("details.test")) {
        const keep =
          (!statuses.length || statuses.includes(d.dataset.status)) &&
          (!suite || d.dataset.suite === suite) &&
          (!tag || (d.dataset.tags || "").split(" ").includes(tag)) &&
          (!q || d.dataset.search.includes(q) || d.textContent.toLowerCase().includes(q));
        d.classList.toggle("hidden", !keep);
        if (keep) shown += 1;
      }
      const none = document.getElementById("none-shown");
      if (none) none.classList.toggle("hidden", shown > 0);
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const params = new URLSearchParams();
      for (const name of ["status", "suite", "tag", "q"]) {
        const value = (form.elements[name].value || "").trim();
        if (value) params.set(name, value);
      }
      const query = params.toString();
      history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
      apply();
    });
    apply();
  }

  function serverFilters() {
    const form = document.getElementById("filters");
    if (!form || !form.elements.status) return;
    form.elements.status.addEventListener("change", () => form.requestSubmit());
    // Empty fields stay out of the URL, so a shared link says only what was filtered.
    form.addEventListener("submit", () => {
      for (const field of form.querySelectorAll("input, select")) {
        if (!field.value) field.disabled = true;
      }
    });
    window.addEventListener("pageshow", () => {
      for (const field of form.querySelectorAll("input, select")) field.disabled = false;
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (body.dataset.static) staticFilters();
    else serverFilters();
    if (body.dataset.refresh) startRefresh();
  });
})();
