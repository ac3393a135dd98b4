// The inspector's shell: the views (each a module loaded when first shown), the hash
// router (#/view/argument?query), the scope and API key, and keyboard navigation.
// A new view is one entry in VIEWS and one module in views/.

import { api, ApiError, session } from "./api.js";
import { h, replace } from "./dom.js";

/** Every view: its hash, label, navigation group and module; `hidden` views open from others. */
export const VIEWS = [
  { id: "scopes", label: "Scopes", group: "Memory", module: "./views/scopes.js" },
  { id: "memories", label: "Memories", group: "Memory", module: "./views/memories.js" },
  { id: "memory", label: "Memory", group: "Memory", module: "./views/memory.js", hidden: true },
  { id: "graph", label: "Graph", group: "Memory", module: "./views/graph.js" },
  { id: "timeline", label: "Timeline", group: "Memory", module: "./views/timeline.js" },
  { id: "conflicts", label: "Conflicts", group: "Review", module: "./views/conflicts.js" },
  { id: "decisions", label: "Decisions", group: "Learning", module: "./views/decisions.js" },
  { id: "strategies", label: "Strategies", group: "Learning", module: "./views/strategies.js" },
  { id: "opinions", label: "Opinions", group: "Learning", module: "./views/opinions.js" },
  { id: "goals", label: "Goals", group: "Learning", module: "./views/goals.js" },
  { id: "self", label: "Self-model", group: "Learning", module: "./views/self.js" },
  { id: "upkeep", label: "Sleep & gardener", group: "Upkeep", module: "./views/upkeep.js" },
  { id: "events", label: "Live events", group: "Upkeep", module: "./views/events.js" },
  { id: "stats", label: "Stats", group: "Upkeep", module: "./views/stats.js" },
];

const main = document.getElementById("main");
const nav = document.getElementById("nav");
let current = { stop() {} };

/** The route of the hash: view id, its argument, and its query parameters. */
export function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const cut = hash.includes("?") ? hash.indexOf("?") : hash.length;
  const [path, query] = [hash.slice(0, cut), hash.slice(cut + 1)];
  const [view = "", ...rest] = path.split("/");
  return { view: view || "scopes", arg: decodeURIComponent(rest.join("/")), query: new URLSearchParams(query) };
}

/** Go to a view: go("memory", id) ; go("memories", "", {q: "..."}). */
export function go(view, arg = "", query = {}) {
  const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== "" && v !== undefined && v !== null));
  const hash = `#/${view}${arg ? `/${encodeURIComponent(arg)}` : ""}${params.size ? `?${params}` : ""}`;
  if (location.hash === hash) show();
  else location.hash = hash;
}

function drawNav(active) {
  let group = "";
  const items = [];
  let shortcut = 0;
  for (const view of VIEWS) {
    if (view.hidden) continue;
    shortcut += 1;
    if (view.group !== group) {
      group = view.group;
      items.push(h("div", { class: "group" }, group));
    }
    items.push(h("a", {
      href: `#/${view.id}`,
      "aria-current": view.id === active ? "page" : null,
      "aria-keyshortcuts": shortcut <= 9 ? `Alt+${shortcut}` : null,
      dataset: { view: view.id },
    }, view.label, shortcut <= 9 ? h("kbd", {}, `Alt+${shortcut}`) : ""));
  }
  replace(nav, items);
}

function drawScope() {
  document.getElementById("scope-user").value = session.user;
  document.getElementById("scope-user").disabled = Boolean(session.key);
  document.getElementById("scope-agent").value = session.agent;
  const state = session.key
    ? `API key · user ${session.user || "of the key"}`
    : session.auth === "api_keys" ? "API key needed" : "local mode (no key)";
  replace(document.getElementById("auth-state"), state);
}

async function show() {
  current.stop();
  const { view, arg, query } = route();
  const spec = VIEWS.find((v) => v.id === view) || VIEWS[0];
  drawNav(spec.hidden ? "memories" : spec.id);
  drawScope();
  document.title = `${spec.label} · UCMA memory inspector`;
  const root = h("section", { "aria-label": spec.label, dataset: { view: spec.id } });
  replace(main, root);
  if (!session.ready() && spec.id !== "scopes") {
    replace(root, h("h2", {}, spec.label),
      h("p", {}, "Choose a scope first: type a user above, or pick one in ", h("a", { href: "#/scopes" }, "Scopes"), "."));
    return;
  }
  try {
    const module = await import(spec.module);
    const stop = await module.render(root, { arg, query, go });
    current = { stop: typeof stop === "function" ? stop : () => {} };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) askKey(error.message);
    replace(root, h("h2", {}, spec.label), h("p", { class: "error", role: "alert" }, error.message || String(error)));
  }
  root.dataset.ready = "true"; // the view has drawn everything it loads (tests wait for it)
}

function askKey(message = "") {
  const dialog = document.getElementById("key-dialog");
  if (dialog.open) return;
  replace(document.getElementById("key-error"), message);
  document.getElementById("key-input").value = "";
  dialog.returnValue = "";
  dialog.showModal();
  document.getElementById("key-input").focus();
}

async function useKey(key) {
  session.setKey(key);
  if (!key) {
    session.setScope("", "");
    return true;
  }
  try {
    const page = await api("GET", "/v1/scopes", { params: { limit: 1 }, scoped: false });
    const first = page.items[0];
    session.setScope(first ? first.user_id : "", session.agent || (first ? first.agent_id : ""));
    return true;
  } catch (error) {
    session.setKey("");
    replace(document.getElementById("key-error"), error.message);
    return false;
  }
}

function keyboard(event) {
  const typing = event.target.closest("input, textarea, select, [contenteditable]");
  if (event.altKey && /^[1-9]$/.test(event.key)) {
    const link = nav.querySelectorAll("a")[Number(event.key) - 1];
    if (link) {
      event.preventDefault();
      location.hash = link.getAttribute("href");
      main.focus();
    }
    return;
  }
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "/") {
    const search = main.querySelector("input[type=search]");
    if (search) {
      event.preventDefault();
      search.focus();
    }
  } else if (event.key === "j" || event.key === "k") {
    const rows = [...main.querySelectorAll("tr.row")];
    if (!rows.length) return;
    const at = rows.indexOf(document.activeElement);
    const next = event.key === "j" ? Math.min(rows.length - 1, at + 1) : Math.max(0, at - 1);
    rows[at < 0 ? 0 : next].focus();
    event.preventDefault();
  } else if (event.key === "[" || event.key === "]") {
    main.querySelector(`button[data-key="${event.key === "[" ? "prev" : "next"}"]:not([disabled])`)?.click();
  }
}

async function boot() {
  session.loadScope();
  const health = await api("GET", "/v1/health", { scoped: false });
  session.auth = health.auth;
  if (session.key && !(await useKey(session.key))) askKey("The saved key was refused.");
  else if (health.auth === "api_keys" && !session.key) askKey();
  document.getElementById("scope-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const user = session.key ? session.user : document.getElementById("scope-user").value.trim();
    session.setScope(user, document.getElementById("scope-agent").value.trim());
    show();
  });
  document.getElementById("key-button").addEventListener("click", () => askKey());
  document.getElementById("key-dialog").addEventListener("close", async (event) => {
    const value = event.target.returnValue;
    if (value === "ok") {
      const ok = await useKey(document.getElementById("key-input").value.trim());
      if (!ok) {
        askKey(document.getElementById("key-error").textContent);
        return;
      }
    } else if (value === "forget") {
      await useKey("");
    }
    show();
  });
  document.addEventListener("keydown", keyboard);
  window.addEventListener("hashchange", show);
  await show();
}

boot();
