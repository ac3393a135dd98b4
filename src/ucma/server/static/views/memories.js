// Memories: the scope's memories a page at a time (by kind and bank, oldest first, with
// the total), or, with a query, the real recall: confidence, cascade path, channel scores.
import { api, post } from "../api.js";
import { badge, bar, facts, fixed, h, load, number, pager, replace, table, td, when } from "../dom.js";

const LIMIT = 100;
const KINDS = ["", "episodic", "semantic", "procedural", "learning"];
const BANKS = ["", "world", "experience", "opinion", "observation"];

function select(name, label, options, value) {
  return h("label", {}, label, h("select", { name },
    options.map((o) => h("option", { value: o, selected: o === value }, o || "all"))));
}

export async function render(root, { query, go }) {
  const q = query.get("q") || "";
  const kind = query.get("kind") || "";
  const bank = query.get("bank") || "";
  const archived = query.get("archived") === "1";
  const offset = Number(query.get("offset")) || 0;
  const form = h("form", { class: "toolbar", role: "search" },
    h("label", {}, "Search (recall)", h("input", { type: "search", name: "q", value: q, placeholder: "Ask what the agent remembers…  ( / )" })),
    select("kind", "kind", KINDS, kind),
    select("bank", "bank", BANKS, bank),
    h("label", {}, "archived", h("input", { type: "checkbox", name: "archived", checked: archived })),
    h("button", { type: "submit", class: "primary" }, q ? "Search" : "Show"),
    q && h("button", { type: "button", onclick: () => go("memories", "", { kind, bank }) }, "Clear search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    go("memories", "", {
      q: data.get("q").trim(), kind: data.get("kind"), bank: data.get("bank"), archived: data.get("archived") ? "1" : "",
    });
  });
  const results = h("div");
  replace(root, h("h2", {}, q ? "Search" : "Memories"), form, results);
  const open = (id) => go("memory", id);
  if (q) {
    const body = { query: q, limit: 25, explain: true };
    if (kind) body.kinds = [kind];
    if (bank) body.banks = [bank];
    await load(results, post("/v1/recall", body), (answer) => recallResult(answer, open));
    return;
  }
  const params = { limit: LIMIT, offset, kind, bank, include_archived: archived || undefined };
  await load(results, api("GET", "/v1/memories", { params }), (page) => {
    const move = (o) => go("memories", "", { kind, bank, archived: archived ? "1" : "", offset: o });
    const pages = pager({ offset, limit: LIMIT, total: page.total, count: page.items.length, next: page.next_offset, go: move });
    if (!page.items.length) return h("p", { class: "empty" }, "No memories here.");
    return [pages, memoryTable(page.items, open), pager({ offset, limit: LIMIT, total: page.total, count: page.items.length, next: page.next_offset, go: move })];
  });
}

export function memoryTable(items, open) {
  return table(
    ["content", "kind", "bank", { text: "salience", num: true }, "created"],
    items.map((m) => [
      h("div", { class: "text" }, m.archived_at ? badge("archived", "warn") : "", m.status === "superseded" ? badge("superseded", "warn") : "", " ",
        h("a", { href: `#/memory/${encodeURIComponent(m.id)}` }, m.content)),
      m.kind, m.bank,
      td({ class: "num" }, fixed(m.effective_salience, 2)),
      td({ class: "clip", title: m.created_at_iso }, when(m.created_at)),
    ]),
    { open: (index) => open(items[index].id), widths: ["", "7rem", "7rem", "6rem", "10.5rem"] },
  );
}

function recallResult(answer, open) {
  const path = answer.cascade_path || {};
  const summary = h("div", { class: "card" },
    facts([
      ["confidence", h("span", {}, fixed(answer.confidence, 2), " ", answer.low_confidence ? badge("low: consider abstaining", "bad") : badge("enough", "ok"))],
      ["query class", answer.query_class],
      ["cascade path", [path.primary_layer, ...(path.cascaded_to || [])].filter(Boolean).join(" → ") || "—"],
      ["why", path.cascade_trigger || ""],
      ["merge", path.merge_strategy || "none"],
    ]));
  if (!answer.results.length) return [summary, h("p", { class: "empty" }, "Nothing recalled.")];
  const rows = answer.results.map((hit, rank) => [
    td({ class: "num" }, String(rank + 1)),
    h("div", { class: "text" }, h("a", { href: `#/memory/${encodeURIComponent(hit.id)}` }, hit.content)),
    h("span", {}, hit.kind, " · ", hit.bank, h("br"), h("span", { class: "muted" }, `layer ${hit.layer || "—"}`)),
    h("div", {}, bar(hit.confidence?.overall), h("span", { class: "muted" }, `${fixed(hit.confidence?.overall, 2)} ${hit.confidence?.level || ""}`)),
    h("div", { class: "channels" }, Object.entries(hit.channels || {}).map(([name, value]) => badge(`${name} ${fixed(value, 2)}`))),
    td({ class: "num" }, fixed(hit.score, 3)),
  ]);
  return [
    summary,
    h("h3", {}, `${number(answer.results.length)} memories, best first`),
    table(["#", "memory", "kind · bank", "confidence", "channel scores", { text: "score", num: true }], rows,
      { open: (index) => open(answer.results[index].id), widths: ["3rem", "", "9rem", "9rem", "16rem", "5rem"] }),
  ];
}
