// assertly view: the one script of the viewer's pages (the CSP allows no other).
// - A run still being written (or still being counted) refreshes its page every two seconds,
//   keeping the tests that are open open.
// - An exported page (no server to filter) filters its tests here, from the URL's parameters.
// - In a matrix run, a cell's link (#id) opens the test it names; a link to a conversation's
//   turn opens its test and its trial.
// Agent output is never turned into markup: this script only moves nodes the server escaped,
// and compares text with textContent.
"use strict";

(function () {
  const body = document.body;
  const YES = ["1", "true", "yes", "on"];

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
    // A conversation's trials the reader folded or unfolded stay so (they have ids).
    const folds = new Map(
      Array.from(document.querySelectorAll("details.trial-chat[id]")).map((d) => [d.id, d.open])
    );
    for (const id of ["run-header", "live", "shown", "matrix", "test-list"]) {
      const now = document.getElementById(id);
      const next = fresh.getElementById(id);
      if (now && next) now.replaceWith(document.adoptNode(next));
    }
    for (const d of document.querySelectorAll("details.test")) {
      if (open.has(d.dataset.key)) d.open = true;
    }
    for (const d of document.querySelectorAll("details.trial-chat[id]")) {
      if (folds.has(d.id)) d.open = folds.get(d.id);
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
      const disagree = YES.includes((params.get("disagree") || "").toLowerCase());
      for (const name of ["status", "suite", "tag", "q"]) {
        if (form.elements[name]) form.elements[name].value = params.get(name) || "";
      }
      if (form.elements.disagree) form.elements.disagree.checked = disagree;
      let shown = 0;
      // A matrix run's row (a test across targets) is kept when one of its cells meets the
      // filters (and, with disagree, when its verdicts differ): the server's rule.
      const rows = new Map();
      const tests = Array.from(document.querySelectorAll("details.test"));
      for (const d of tests) {
        const keep =
          (!statuses.length || statuses.includes(d.dataset.status)) &&
          (!suite || d.dataset.suite === suite) &&
          (!tag || (d.dataset.tags || "").split(" ").includes(tag)) &&
          (!q || d.dataset.search.includes(q) || d.textContent.toLowerCase().includes(q));
        if (d.dataset.row) {
          rows.set(d.dataset.row, rows.get(d.dataset.row) || keep);
          continue;
        }
        d.classList.toggle("hidden", !keep);
        if (keep) shown += 1;
      }
      for (const tr of document.querySelectorAll("table.matrix tr[data-row]")) {
        const keep = Boolean(rows.get(tr.dataset.row)) && (!disagree || tr.dataset.disagree === "1");
        rows.set(tr.dataset.row, keep);
        tr.classList.toggle("hidden", !keep);
        if (keep) shown += 1;
      }
      for (const d of tests) {
        if (d.dataset.row) d.classList.toggle("hidden", !rows.get(d.dataset.row));
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
      if (form.elements.disagree && form.elements.disagree.checked) params.set("disagree", "1");
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
    if (form.elements.disagree) {
      form.elements.disagree.addEventListener("change", () => form.requestSubmit());
    }
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

  // What a link names (#t-…, a matrix cell's test; #t-…-trial-1-turn-3, a conversation's
  // turn): the test and every fold around the target opened, the target shown. The id is
  // looked up, never parsed.
  function openLinked() {
    const id = location.hash.slice(1); // the ids are t-, hex digits and -trial-N-turn-N
    const target = id ? document.getElementById(id) : null;
    if (!target || !target.closest("details.test")) return;
    for (let fold = target; fold; fold = fold.parentElement) {
      if (fold.tagName === "DETAILS") fold.open = true;
    }
    target.scrollIntoView({ block: "start" });
  }

  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest('a[href^="#"]') : null;
    // Following the link again (same #id) fires no hashchange: open it after the jump.
    if (link) setTimeout(openLinked, 0);
  });
  window.addEventListener("hashchange", openLinked);

  document.addEventListener("DOMContentLoaded", () => {
    openLinked();
    if (body.dataset.static) staticFilters();
    else serverFilters();
    if (body.dataset.refresh) startRefresh();
  });
})();
