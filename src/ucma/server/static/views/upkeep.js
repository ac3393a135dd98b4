// Sleep and the gardener: the gardener's schedule (last run, next due, what it did), what
// upkeep changed lately in this scope (the event log's archive, unarchive and supersession
// events), a forgetting preview (what would be archived and why), the near-duplicates
// merged, and a sleep cycle run on demand (confirmed).
import { get, post } from "../api.js";
import { badge, confirmAction, fixed, guarded, h, link, load, replace, table, toast, when } from "../dom.js";

const UPKEEP_EVENTS = ["memory.archived", "memory.restored", "memory.superseded", "fact.superseded", "strategy.merged", "procedure.status_changed"];
const RUNS = "ucma.inspector.sleep-runs";

function phaseSummary(report) {
  return ["compress", "abstract", "reinforce", "prune"].map((phase) => `${phase}: ${Object.entries(report[phase] || {}).map(([k, v]) => `${k} ${typeof v === "number" ? fixed(v, Number.isInteger(v) ? 0 : 2) : v}`).join(", ")}`).join(" · ");
}

export async function render(root, { go }) {
  const runs = JSON.parse(sessionStorage.getItem(RUNS) || "[]");
  const recent = h("div"), preview = h("div"), merged = h("div"), schedule = h("div");
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
      runs.unshift({ at: Date.now() / 1000, report });
      sessionStorage.setItem(RUNS, JSON.stringify(runs.slice(0, 20)));
      toast(`Sleep cycle done in ${fixed(report.seconds, 2)} s.`);
      go("upkeep");
    }),
  }, "Run sleep cycle…");
  replace(root,
    h("h2", {}, "Sleep and gardener"),
    h("h3", {}, "Gardener schedule"),
    h("p", { class: "muted" }, "ucma serve runs these jobs for every scope; what they change here shows below as events."),
    schedule,
    h("h3", {}, "Sleep"),
    h("div", { class: "actions", style: "justify-content:flex-start" }, runButton),
    runs.length ? [h("h3", {}, "Cycles run from this page"), table(["when", "phases", "what changed"], runs.map((r) => [
      when(r.at), (r.report.phases || []).join(", "), h("span", { class: "wrap" }, r.report.error ? badge(r.report.error, "bad") : phaseSummary(r.report)),
    ]), { widths: ["10.5rem", "14rem", ""] })] : "",
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
  ]);
  // The preview assesses every live memory (about a second at 100,000): on demand.
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
