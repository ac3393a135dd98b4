// One memory: what it says, its versions and lifecycle history, supersession and
// conflicts (facts), retention curve, salience history with the outcomes that moved it,
// and the actions: edit (episodes, lessons), correct (facts), archive / unarchive, delete.
import { api, get, post } from "../api.js";
import {
  badge, confirmAction, facts, fixed, guarded, h, lineChart, link, load, replace, table, td, toast, when,
} from "../dom.js";

const EDITABLE = new Set(["episodic", "learning"]);

export async function render(root, { arg, go }) {
  const id = arg;
  if (!id) {
    replace(root, h("h2", {}, "Memory"), h("p", {}, "Open a memory from ", link("#/memories", "Memories"), "."));
    return;
  }
  const memory = await get(`/v1/memories/${encodeURIComponent(id)}`);
  const actions = h("div", { class: "actions" });
  const editor = h("div");
  replace(root,
    h("h2", {}, "Memory"),
    h("div", { class: "card" },
      h("p", { class: "wrap", style: "font-size:1.1rem;margin-top:0", dataset: { field: "content" } }, memory.content),
      facts([
        ["id", h("code", {}, memory.id)],
        ["kind · bank", `${memory.kind} · ${memory.bank}`],
        memory.status && ["status", badge(memory.status, memory.status === "superseded" ? "warn" : memory.status === "disputed" ? "bad" : "ok")],
        memory.archived_at && ["archived", badge(`archived ${when(memory.archived_at)}`, "warn")],
        memory.superseded_by && ["superseded by", link(`#/memory/${encodeURIComponent(memory.superseded_by)}`, memory.superseded_by)],
        ["salience", `${fixed(memory.effective_salience, 3)} (base ${fixed(memory.base_salience, 2)}, outcomes ${fixed(memory.outcome_adjustment, 3)})`],
        ["created", `${when(memory.created_at)}${memory.updated_at && memory.updated_at !== memory.created_at ? ` · updated ${when(memory.updated_at)}` : ""}`],
        ["accessed", `${memory.access_count} times${memory.last_accessed ? `, last ${when(memory.last_accessed)}` : ""}`],
        memory.session_id && ["session", link(`#/timeline?session=${encodeURIComponent(memory.session_id)}`, memory.session_id)],
        memory.source && ["source", memory.source],
        memory.confidence !== undefined && ["confidence", fixed(memory.confidence, 2)],
        Object.keys(memory.metadata || {}).length && ["metadata", h("code", { class: "wrap" }, JSON.stringify(memory.metadata))],
      ]),
      actions, editor));
  drawActions(actions, editor, memory, go);

  const sections = {
    history: h("div"), facts: h("div"), conflicts: h("div"), retention: h("div"),
    salience: h("div"), sources: h("div"),
  };
  root.append(
    h("div", { class: "grid2" },
      h("section", { class: "card", "aria-labelledby": "h-versions" }, h("h3", { id: "h-versions" }, "Versions and history"), sections.history),
      h("section", { class: "card", "aria-labelledby": "h-retention" }, h("h3", { id: "h-retention" }, "Retention curve (next 30 days)"), sections.retention)),
    memory.kind === "semantic" && h("div", { class: "grid2" },
      h("section", { class: "card", "aria-labelledby": "h-facts" }, h("h3", { id: "h-facts" }, "Fact history (supersession)"), sections.facts),
      h("section", { class: "card", "aria-labelledby": "h-conflicts" }, h("h3", { id: "h-conflicts" }, "Conflicts"), sections.conflicts)),
    h("div", { class: "grid2" },
      h("section", { class: "card", "aria-labelledby": "h-salience" }, h("h3", { id: "h-salience" }, "Salience history and influence"), sections.salience),
      h("section", { class: "card", "aria-labelledby": "h-sources" }, h("h3", { id: "h-sources" }, "Merged occurrences"), sections.sources)));

  const base = `/v1/memories/${encodeURIComponent(id)}`;
  const work = [
    load(sections.history, get(`${base}/history`), (answer) => historyTable(answer.history)),
    load(sections.retention, get(`${base}/retention`, { days_ahead: 30 }), retentionChart),
    load(sections.salience, get(`${base}/influence`, { min_decisions: 1 }), salienceHistory),
    load(sections.sources, get(`${base}/sources`), (answer) => answer.sources.length
      ? table(["when", "source", "reference"], answer.sources.map((s) => [when(s.at), s.source, h("code", {}, s.reference)]))
      : h("p", { class: "empty" }, "No near-repeats were merged into it.")),
  ];
  if (memory.kind === "semantic") {
    const about = { subject: memory.subject, predicate: memory.predicate };
    work.push(load(sections.facts, get("/v1/facts/history", about), (page) => factHistory(page.items, memory.id)));
    work.push(load(sections.conflicts, get("/v1/conflicts", about), (page) => conflictList(page.items)));
  }
  await Promise.all(work);
}

function drawActions(actions, editor, memory, go) {
  const id = memory.id;
  const base = `/v1/memories/${encodeURIComponent(id)}`;
  const buttons = [];
  if (EDITABLE.has(memory.kind)) {
    buttons.push(h("button", { type: "button", onclick: () => edit(editor, memory, go) }, "Edit"));
  }
  if (memory.kind === "semantic" && memory.status !== "superseded") {
    buttons.push(h("button", { type: "button", onclick: () => correct(editor, memory, go) }, "Correct"));
  }
  buttons.push(h("a", { class: "button", href: `#/graph/${encodeURIComponent(id)}` }, "Graph"));
  if (memory.archived_at) {
    buttons.push(h("button", {
      type: "button",
      onclick: guarded(async () => {
        await post(`${base}/unarchive`);
        toast("Unarchived: back in search.", { undo: async () => { await post(`${base}/archive`); go("memory", id); } });
        go("memory", id);
      }),
    }, "Unarchive"));
  } else {
    buttons.push(h("button", {
      type: "button",
      onclick: guarded(async () => {
        const ok = await confirmAction({
          title: "Archive this memory?",
          text: `“${memory.content}” will leave search and recall; it is kept and can be restored.`,
          action: "Archive",
        });
        if (!ok) return;
        await post(`${base}/archive`);
        toast("Archived.", { undo: async () => { await post(`${base}/unarchive`); go("memory", id); } });
        go("memory", id);
      }),
    }, "Archive"));
  }
  buttons.push(h("button", {
    type: "button",
    class: "danger",
    onclick: guarded(async () => {
      const ok = await confirmAction({
        title: "Delete this memory?",
        text: `“${memory.content}” and what hangs off it (vector, graph edges, retention) are deleted for good; only its history stays. This cannot be undone: archive it instead to keep it restorable.`,
        action: "Delete",
      });
      if (!ok) return;
      await api("DELETE", base);
      toast("Deleted (this cannot be undone).");
      go("memories");
    }),
  }, "Delete"));
  replace(actions, buttons);
}

function edit(editor, memory, go) {
  const area = h("textarea", { name: "text", "aria-label": "New text" }, memory.content);
  const form = h("form", {}, h("h3", {}, "Edit: a new version (the old text stays in the history)"), area,
    h("div", { class: "actions" },
      h("button", { type: "button", onclick: () => replace(editor) }, "Cancel"),
      h("button", { type: "submit", class: "primary" }, "Save version")));
  form.addEventListener("submit", guarded(async (event) => {
    event.preventDefault();
    const text = area.value.trim();
    if (!text || text === memory.content) return;
    const ok = await confirmAction({ title: "Save the new text?", text: `“${memory.content}” → “${text}”`, action: "Save" });
    if (!ok) return;
    const path = `/v1/memories/${encodeURIComponent(memory.id)}`;
    await api("PUT", path, { body: { text } });
    toast("Saved as a new version.", {
      undo: async () => { await api("PUT", path, { body: { text: memory.content } }); go("memory", memory.id); },
    });
    go("memory", memory.id);
  }));
  replace(editor, form);
  area.focus();
}

function correct(editor, memory, go) {
  const input = h("input", { name: "object", value: memory.object, "aria-label": "Correct value", style: "width:100%" });
  const form = h("form", {},
    h("h3", {}, `Correct: ${memory.subject} · ${memory.predicate}`),
    h("p", { class: "muted" }, "The new value is asserted as stated by the user; the old one is superseded and kept in the fact's history."),
    input,
    h("div", { class: "actions" },
      h("button", { type: "button", onclick: () => replace(editor) }, "Cancel"),
      h("button", { type: "submit", class: "primary" }, "Correct")));
  form.addEventListener("submit", guarded(async (event) => {
    event.preventDefault();
    const value = input.value.trim();
    if (!value || value === memory.object) return;
    const ok = await confirmAction({
      title: "Correct this fact?",
      text: `${memory.subject} ${memory.predicate}: “${memory.object}” → “${value}”`,
      action: "Correct",
    });
    if (!ok) return;
    const assert = (object) => post("/v1/facts", { subject: memory.subject, predicate: memory.predicate, object, provenance: "user_stated" });
    const answer = await assert(value);
    toast(answer.response, {
      undo: async () => { const back = await assert(memory.object); go("memory", back.fact.id); },
    });
    go("memory", answer.fact.id);
  }));
  replace(editor, form);
  input.focus();
}

function historyTable(entries) {
  if (!entries.length) return h("p", { class: "empty" }, "Nothing has happened to it yet.");
  return table(["when", "event", "what changed"], entries.map((entry) => [
    when(entry.at),
    badge(entry.event),
    entry.event === "updated"
      ? h("div", { class: "wrap" }, `v${entry.details.version - 1}: “${entry.details.previous}” → v${entry.details.version}: “${entry.details.new}”`)
      : h("code", { class: "wrap" }, JSON.stringify(entry.details)),
  ]), { widths: ["10.5rem", "7rem", ""] });
}

function factHistory(items, currentId) {
  if (!items.length) return h("p", { class: "empty" }, "No other versions.");
  return table(["value", "status", "valid"], items.map((fact) => [
    fact.id === currentId ? h("strong", {}, fact.object) : link(`#/memory/${encodeURIComponent(fact.id)}`, fact.object),
    badge(fact.status, fact.status === "superseded" ? "warn" : fact.status === "disputed" ? "bad" : "ok"),
    `${when(fact.valid_from)}${fact.valid_until ? ` → ${when(fact.valid_until)}` : " → now"}`,
  ]), { widths: ["", "7rem", "13rem"] });
}

function conflictList(items) {
  if (!items.length) return h("p", { class: "empty" }, "No conflicts about this fact.");
  return table(["values", "status", "why"], items.map((c) => [
    `“${c.existing_value}” vs “${c.new_value}”`,
    c.status === "pending" ? link("#/conflicts", badge("pending: decide", "bad")) : badge(c.status),
    h("span", { class: "muted" }, c.explanation),
  ]), { widths: ["", "8rem", ""] });
}

function retentionChart(answer) {
  const points = (answer.curve || []).map((p) => ({ x: p.days, y: p.retention, label: p.days === 0 ? "now" : `+${p.days} d`, title: `+${p.days} d: ${fixed(p.retention, 3)}` }));
  return [
    h("p", {}, "Retained now: ", h("strong", {}, fixed(answer.retention, 3)), h("span", { class: "muted" }, " — recalling it or using it in a decision resets the curve.")),
    lineChart(points, { xLabel: "days from now", yLabel: "retention" }),
  ];
}

function salienceHistory(answer) {
  const updates = answer.salience_history || [];
  const verdictTone = { helpful: "ok", misleading: "bad", mixed: "warn" }[answer.verdict] || "";
  const head = h("p", {}, "Verdict: ", badge(answer.verdict, verdictTone),
    ` · ${answer.decisions} decisions with outcomes (${answer.positive} good, ${answer.negative} bad), mean quality ${fixed(answer.mean_quality, 2)}`);
  if (!updates.length) return [head, h("p", { class: "empty" }, "No outcome has moved its salience yet.")];
  const values = [updates[0].previous_adjustment, ...updates.map((u) => u.new_adjustment)];
  const low = Math.min(...values, 0), high = Math.max(...values, 0.01);
  const points = [{ x: 0, y: updates[0].previous_adjustment, label: "start" },
    ...updates.map((u, i) => ({ x: i + 1, y: u.new_adjustment, label: when(u.created_at).slice(0, 10), title: `${u.reason}: ${fixed(u.delta, 3)}` }))];
  return [
    head,
    lineChart(points, { xLabel: "outcomes", yLabel: "outcome adjustment", min: low, max: high }),
    table(["when", "decision", { text: "delta", num: true }, "why"], updates.map((u) => [
      when(u.created_at),
      link(`#/decisions/${encodeURIComponent(u.trace_id)}`, h("code", {}, u.trace_id)),
      td({ class: "num" }, `${u.delta >= 0 ? "+" : ""}${fixed(u.delta, 3)}`),
      h("span", { class: "muted" }, u.reason),
    ]), { widths: ["10.5rem", "", "5rem", ""] }),
  ];
}
