// The conflicts queue (seed 002's "ask the user"): pending conflicts with their options,
// resolved with one click after a confirmation; the others for reference; memories
// flagged for review because a premise they rest on changed.
import { get, post } from "../api.js";
import { badge, confirmAction, fixed, guarded, h, link, load, pager, replace, table, toast, when } from "../dom.js";

const LIMIT = 50;
const STATUSES = ["pending", "user_resolved", "resolved", "obsolete", ""];

export async function render(root, { query, go }) {
  const status = query.has("status") ? query.get("status") : "pending";
  const offset = Number(query.get("offset")) || 0;
  const choose = h("select", { name: "status", "aria-label": "status" },
    STATUSES.map((s) => h("option", { value: s, selected: s === status }, s || "all")));
  choose.addEventListener("change", () => go("conflicts", "", { status: choose.value }));
  const list = h("div");
  const flags = h("div");
  replace(root, h("h2", {}, "Conflicts"),
    h("div", { class: "toolbar" }, h("label", {}, "status", choose)),
    list, h("h3", {}, "Memories flagged for review"), flags);
  const reload = () => go("conflicts", "", { status, offset });
  await Promise.all([
    load(list, get("/v1/conflicts", { status, limit: LIMIT, offset }), (page) => {
      if (!page.items.length) return h("p", { class: "empty" }, status === "pending" ? "No conflict waits for a decision." : "No conflicts.");
      return [
        page.items.map((c) => conflictCard(c, reload)),
        pager({ offset, limit: LIMIT, count: page.items.length, next: page.next_offset, go: (o) => go("conflicts", "", { status, offset: o }) }),
      ];
    }),
    load(flags, get("/v1/review_flags", { limit: 100 }), (page) => {
      if (!page.items.length) return h("p", { class: "empty" }, "Nothing is flagged.");
      return table(["memory", "why", "since", ""], page.items.map((f) => [
        link(`#/memory/${encodeURIComponent(f.memory_id)}`, h("code", {}, f.memory_id)),
        f.reason,
        when(f.flagged_at),
        h("button", {
          type: "button",
          onclick: guarded(async () => {
            const ok = await confirmAction({ title: "Clear this flag?", text: `The memory ${f.memory_id} was reviewed: ${f.reason}`, action: "Clear" });
            if (!ok) return;
            await post(`/v1/review_flags/${encodeURIComponent(f.memory_id)}/clear`);
            toast("Flag cleared.");
            reload();
          }),
        }, "Mark reviewed"),
      ]), { widths: ["", "", "10.5rem", "9rem"] });
    }),
  ]);
}

function conflictCard(c, reload) {
  const pending = c.status === "pending";
  const options = c.options || [c.existing_value, c.new_value];
  return h("article", { class: "card", style: "margin-bottom:.8rem", dataset: { conflict: c.id } },
    h("h3", {}, `${c.subject} · ${c.predicate}: `, `“${c.existing_value}” or “${c.new_value}”?`, " ",
      badge(c.status, pending ? "bad" : "ok")),
    h("p", { class: "muted" }, c.explanation),
    h("p", {}, `confidence ${fixed(c.existing_confidence, 2)} vs ${fixed(c.new_confidence, 2)} · ${c.conflict_type} · detected ${when(c.detected_at)}`,
      c.chosen_value ? ` · chosen “${c.chosen_value}”` : "",
      " · facts ", link(`#/memory/${encodeURIComponent(c.existing_fact_id)}`, "existing"), ", ", link(`#/memory/${encodeURIComponent(c.new_fact_id)}`, "new")),
    pending && h("div", { class: "actions", style: "justify-content:flex-start" },
      h("span", {}, "Which is right? "),
      options.map((value) => h("button", {
        type: "button",
        class: "primary",
        onclick: guarded(async () => {
          const ok = await confirmAction({
            title: "Resolve this conflict?",
            text: `${c.subject} ${c.predicate} = “${value}”. The other value is superseded and kept in the fact's history; a resolution cannot be reopened (assert the other value again to change it back).`,
            action: `Keep “${value}”`,
          });
          if (!ok) return;
          const answer = await post(`/v1/conflicts/${encodeURIComponent(c.id)}/resolve`, { chosen_value: value });
          toast(answer.response || "Resolved.");
          reload();
        }),
      }, `Keep “${value}”`))));
}
