// Sleep and the gardener: the gardener's schedule (last run, next due, what it did), the
// sleep cycles that ran for this scope (stored: why, when, how long, what each phase
// changed), what upkeep changed lately (the event log's archive, unarchive and
// supersession events), a forgetting preview (what would be archived and why), the
// near-duplicates merged, and a sleep cycle run on demand (confirmed).
import { get, post } from "../api.js";
import { badge, confirmAction, fixed, guarded, h, link, load, pager, replace, table, toast, when } from "../dom.js";

const UPKEEP_EVENTS = ["memory.archived", "memory.restored", "memory.superseded", "fact.superseded", "strategy.merged", "procedure.status_changed"];
const RUNS = 20;
const TRIGGERS = { request: "asked", new_session: "new session", all_scopes: "every scope", gardener: "gardener" };

/** The counts a sleep phase reports, in words (clean names the tables it cleaned). */
const COUNTS = {
  expired: "expired", promoted: "promoted", archived: "archived", purged: "purged",
  episodes: "episodes read", facts_new: "new facts", facts_reinforced: "facts reinforced",
  pairs: "co-retrieved pairs", edges_strengthened: "links strengthened", nodes: "memories ranked",
};

/** What a cycle changed, phase by phase, leaving out what stayed at zero. */
function changes(run) {
  const parts = Object.entries(run.changes).map(([phase, counts]) => {
    const moved = Object.entries(counts).filter(([k, v]) => k !== "threshold" && v);
    const said = moved.map(([k, v]) => `${COUNTS[k] || `${k.replaceAll("_", " ")} rows removed`} ${v}`);
    return said.length ? `${phase}: ${said.join(", ")}` : "";
  }).filter(Boolean);
  return parts.length ? parts.join(" · ") : "nothing to do";
}

function runState(run) {
  if (run.error) return badge("failed", "bad");
  if (run.interrupted) return badge("interrupted", "warn");
  return badge("done", "ok");
}

export async function render(root, { query, go }) {
  const offset = Number(query.get("offset")) || 0;
  const recent = h("div"), preview = h("div"), merged = h("div"), schedule = h("div"), runs = h("div");
  const runButton = h("button", {
    type: "button",
    class: "primary",
    onclick: guarded(async () => {
      const ok = await confirmAction({
        title: "Run a sleep cycle now?",
        text: "Compress expired episodes, abstract facts, reinforce the graph, forget (archive) what the policy forgets, clean up. Archived memories can be restored one by one; the cycle itself cannot be undone as a whole.",
        action: "Run sleep",
      });
      if (!ok) return;
      runButton.disabled = true;
      const report = await post("/v1/sleep");
      toast(`Sleep cycle done in ${fixed(report.seconds, 2)} s.`);
      go("upkeep");
    }),
  }, "Run sleep cycle…");
  replace(root,
    h("h2", {}, "Sleep and gardener"),
    h("h3", {}, "Gardener schedule"),
    h("p", { class: "muted" }, "ucma serve runs these jobs for every scope; what they change here shows below as events."),
    schedule,
    h("h3", {}, "Sleep cycles of this scope"),
    h("div", { class: "actions", style: "justify-content:flex-start" }, runButton),
    runs,
    h("h3", {}, "Recent upkeep changes"), recent,
    h("div", { class: "grid2" },
      h("section", { class: "card" }, h("h3", {}, "Forgetting preview (dry run)"), preview),
      h("section", { class: "card" }, h("h3", {}, "Near-duplicates merged"), merged)));
  await Promise.all([
    load(schedule, get("/v1/gardener", {}), (answer) => table(["job", "every", "last run", "next due", "last run did (all scopes)"], answer.jobs.map((j) => [
      j.job, `${j.period_days} d`, j.last_run_at ? when(j.last_run_at) : "never",
      j.running ? badge("running now", "warn") : j.next_due_at === null ? "next tick" : when(j.next_due_at),
      j.last_summary ? h("span", { class: "wrap" }, Object.entries(j.last_summary).map(([k, v]) => `${k} ${v}`).join(", ")) : h("span", { class: "muted" }, "shown in local mode only"),
    ]), { widths: ["8rem", "4rem", "11.5rem", "11.5rem", ""] })),
    load(recent, get("/v1/events", { types: UPKEEP_EVENTS, newest_first: true, limit: 50 }), (page) => (page.items.length
      ? table(["when", "event", "memory", "details"], page.items.map((e) => [
        when(e.occurred_at), badge(e.type),
        e.payload.memory_id ? link(`#/memory/${encodeURIComponent(e.payload.memory_id)}`, h("code", {}, e.payload.memory_id)) : "",
        h("code", { class: "wrap" }, JSON.stringify(e.payload)),
      ]), { widths: ["10.5rem", "11rem", "", ""] })
      : h("p", { class: "empty" }, "No upkeep has changed anything yet."))),
    loadMerged(merged),
    load(runs, get("/v1/sleep/runs", { limit: RUNS, offset }), (page) => (page.items.length ? [
      table(["started", "why", { text: "seconds", num: true }, "result", "what changed"], page.items.map((r) => [
        when(r.started_at), TRIGGERS[r.trigger] || r.trigger, fixed(r.seconds, 2), runState(r),
        h("span", { class: "wrap" }, r.error ? h("span", { class: "error" }, r.error) : changes(r),
          r.interrupted ? h("span", { class: "muted" }, ` (stopped after ${r.phases.at(-1) || "no phase"})`) : ""),
      ]), { widths: ["10.5rem", "7.5rem", "5.5rem", "7rem", ""] }),
      pager({ offset, limit: RUNS, count: page.items.length, next: page.next_offset, go: (o) => go("upkeep", "", { offset: o }) }),
    ] : h("p", { class: "empty" }, "No sleep cycle has run for this scope yet."))),
  ]);
  // The preview changes nothing but is a computation over every live memory: on demand.
  replace(preview, h("p", { class: "muted" }, "What the forgetting pass would archive now, and why; changes nothing."),
    h("button", { type: "button", onclick: guarded(() => showPreview(preview)) }, "Preview forgetting"));
}

async function showPreview(preview) {
  await load(preview, post("/v1/forget", { dry_run: true }), (report) => {
      const rows = report.archived || [];
      return [
        h("p", {}, `Examined ${report.examined ?? "?"} memories: ${rows.length} would be archived, ${(report.purged || []).length} purged.`),
        rows.length ? table(["memory", "why", { text: "retention", num: true }], rows.slice(0, 50).map((v) => [
          link(`#/memory/${encodeURIComponent(v.memory_id)}`, h("code", {}, v.memory_id)), v.reason, fixed(v.retention, 3),
        ]), { widths: ["", "", "6rem"] }) : "",
      ];
  });
}

function loadMerged(merged) {
  return load(merged, get("/v1/duplicates", { limit: 50 }), (page) => (page.items.length
      ? table(["text", "merged into", { text: "similarity", num: true }], page.items.map((d) => [
        h("span", { class: "wrap" }, d.content), link(`#/memory/${encodeURIComponent(d.existing_id)}`, h("code", {}, d.existing_id)), fixed(d.similarity, 3),
      ]), { widths: ["", "", "6rem"] })
      : h("p", { class: "empty" }, "No near-duplicates so far.")));
}
