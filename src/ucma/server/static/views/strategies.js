// Strategies and procedures: every procedure of the scope (workflows, strategies learnt
// from trajectories, pitfalls) with its success statistics, or the strategies for a task.
import { api, get } from "../api.js";
import { badge, bar, fixed, h, link, load, pager, replace, table, td } from "../dom.js";

const LIMIT = 50;

function rows(items, go) {
  return table(["procedure", "type · domain", "status", "success", { text: "runs", num: true }], items.map((p) => [
    h("div", {}, link(`#/memory/${encodeURIComponent(p.id)}`, p.name || p.content),
      h("div", { class: "muted text" }, p.description || ""),
      (p.steps || []).length ? h("ol", { style: "margin:.2rem 0" }, p.steps.slice(0, 5).map((step) => h("li", {}, step.action ?? step.description ?? JSON.stringify(step)))) : ""),
    `${p.procedure_type || ""} · ${p.domain || "—"}`,
    badge(p.status || "", p.status === "active" ? "ok" : p.status === "deprecated" ? "bad" : ""),
    h("div", {}, bar(p.success_rate), fixed(p.success_rate, 2)),
    td({ class: "num" }, String(p.execution_count ?? 0)),
  ]), { open: (i) => go("memory", items[i].id), widths: ["", "11rem", "7rem", "7rem", "4rem"] });
}

export async function render(root, { query, go }) {
  const task = query.get("task") || "";
  const offset = Number(query.get("offset")) || 0;
  const input = h("input", { type: "search", name: "task", value: task, placeholder: "A task, to see the strategies for it…" });
  const form = h("form", { class: "toolbar", role: "search" }, h("label", {}, "Task", input), h("button", { type: "submit", class: "primary" }, "Find strategies"),
    task && h("button", { type: "button", onclick: () => go("strategies") }, "All procedures"));
  form.addEventListener("submit", (event) => { event.preventDefault(); go("strategies", "", { task: input.value.trim() }); });
  const body = h("div");
  replace(root, h("h2", {}, "Strategies and procedures"), form, body);
  if (task) {
    await load(body, get("/v1/strategies", { task, limit: 50 }), (page) => (page.items.length
      ? rows(page.items.map((s) => s.procedure || s), go)
      : h("p", { class: "empty" }, "No strategy for this task yet.")));
    return;
  }
  await load(body, api("GET", "/v1/memories", { params: { kind: "procedural", limit: LIMIT, offset } }), (page) => (page.items.length
    ? [rows(page.items, go), pager({ offset, limit: LIMIT, total: page.total, count: page.items.length, next: page.next_offset, go: (o) => go("strategies", "", { offset: o }) })]
    : h("p", { class: "empty" }, "No procedures or strategies yet.")));
}
