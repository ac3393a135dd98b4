// Decision traces: what the agent decided, from which memories (with their weights), how
// it turned out, and how each memory's decisions went (influence); counterfactuals once
// an outcome is in.
import { get } from "../api.js";
import { badge, bar, facts, fixed, h, link, load, pager, replace, table, td, when } from "../dom.js";

const LIMIT = 50;
const SHOWN_MEMORIES = 12;

const outcomeBadge = (t) => (t.outcome_observed
  ? badge(`${t.outcome_signal} ${fixed(t.outcome_quality, 2)}`, t.outcome_quality > 0 ? "ok" : t.outcome_quality < 0 ? "bad" : "warn")
  : badge("waiting for outcome"));

export async function render(root, ctx) {
  if (ctx.arg) return detail(root, ctx.arg);
  const { query, go } = ctx;
  const offset = Number(query.get("offset")) || 0;
  const observed = query.get("observed") || "";
  const choose = h("select", { name: "observed", "aria-label": "outcome" },
    [["", "all"], ["true", "with outcome"], ["false", "waiting"]].map(([v, label]) => h("option", { value: v, selected: v === observed }, label)));
  choose.addEventListener("change", () => go("decisions", "", { observed: choose.value }));
  const list = h("div");
  replace(root, h("h2", {}, "Decision traces"), h("div", { class: "toolbar" }, h("label", {}, "outcome", choose)), list);
  await load(list, get("/v1/decisions", { limit: LIMIT, offset, observed }), (page) => {
    if (!page.items.length) return h("p", { class: "empty" }, "No decisions recorded.");
    return [
      table(["decision", "type", "memories", "outcome", "when"], page.items.map((t) => [
        link(`#/decisions/${encodeURIComponent(t.id)}`, t.summary),
        t.decision_type,
        td({ class: "num" }, String(Object.keys(t.memory_scores).length)),
        outcomeBadge(t),
        when(t.created_at),
      ]), { open: (i) => go("decisions", page.items[i].id), widths: ["", "9rem", "6rem", "12rem", "10.5rem"] }),
      pager({ offset, limit: LIMIT, count: page.items.length, next: page.next_offset, go: (o) => go("decisions", "", { observed, offset: o }) }),
    ];
  });
}

async function detail(root, id) {
  const trace = await get(`/v1/decisions/${encodeURIComponent(id)}`);
  const used = Object.entries(trace.memory_scores).sort((a, b) => b[1] - a[1]);
  const memories = h("div");
  const counter = h("div");
  replace(root,
    h("h2", {}, "Decision"),
    h("div", { class: "card" },
      h("p", { class: "wrap", style: "font-size:1.1rem;margin-top:0" }, trace.summary),
      facts([
        ["id", h("code", {}, trace.id)],
        ["type", trace.decision_type],
        ["confidence", fixed(trace.confidence, 2)],
        ["outcome", outcomeBadge(trace)],
        trace.outcome_feedback && ["feedback", trace.outcome_feedback],
        ["decided", when(trace.created_at)],
        trace.outcome_at && ["outcome at", when(trace.outcome_at)],
        trace.retrieval_id && ["recall", h("code", {}, trace.retrieval_id)],
      ])),
    h("h3", {}, "Memories it used, and how their decisions went"), memories,
    h("h3", {}, "Counterfactuals"), counter);
  await Promise.all([
    load(memories, Promise.all(used.slice(0, SHOWN_MEMORIES).map(async ([memoryId, weight]) => {
      try {
        const [memory, influence] = await Promise.all([
          get(`/v1/memories/${encodeURIComponent(memoryId)}`),
          get(`/v1/memories/${encodeURIComponent(memoryId)}/influence`, { min_decisions: 1 }),
        ]);
        return { memoryId, weight, memory, influence };
      } catch {
        return { memoryId, weight, memory: null, influence: null };
      }
    })), (rows) => [
      table(["memory", "weight", "verdict", "decisions (good / bad)"], rows.map((r) => [
        r.memory ? link(`#/memory/${encodeURIComponent(r.memoryId)}`, r.memory.content) : h("span", { class: "muted" }, `${r.memoryId} (deleted)`),
        h("div", {}, bar(r.weight), fixed(r.weight, 2)),
        r.influence ? badge(r.influence.verdict, { helpful: "ok", misleading: "bad", mixed: "warn" }[r.influence.verdict] || "") : "",
        r.influence ? `${r.influence.decisions} (${r.influence.positive} / ${r.influence.negative})` : "",
      ]), { widths: ["", "8rem", "8rem", "11rem"] }),
      used.length > SHOWN_MEMORIES ? h("p", { class: "muted" }, `and ${used.length - SHOWN_MEMORIES} more`) : "",
    ]),
    trace.outcome_observed
      ? load(counter, get(`/v1/decisions/${encodeURIComponent(id)}/counterfactuals`), (report) => h("pre", { class: "wrap mono", style: "white-space:pre-wrap" }, JSON.stringify(report, null, 2)))
      : replace(counter, h("p", { class: "empty" }, "Available once an outcome is recorded.")),
  ]);
}
