// Goals (seed 000's predictive paradigm): every goal with its priority, status, progress,
// deadline and what blocks it, subgoals under their goal; a goal's page adds why it is
// suspended (the memories that contradict it), its subgoals, what it lacks (knowledge and
// skill gaps), and the resume and abandon actions (confirmed).
import { get, post } from "../api.js";
import { badge, bar, confirmAction, empty, facts, fixed, guarded, h, link, load, pager, replace, table, toast, when } from "../dom.js";

const LIMIT = 50;
const STATUSES = ["", "active", "suspended", "completed", "abandoned"];
const TONE = { active: "ok", suspended: "warn", completed: "", abandoned: "bad" };

const goalLink = (g) => link(`#/goals/${encodeURIComponent(g.id)}`, g.description);
const statusBadge = (g) => badge(g.status, TONE[g.status] ?? "");
const percent = (value) => h("div", {}, bar(value), `${Math.round(value * 100)} %`);

function deadline(g) {
  if (g.deadline === null || g.deadline === undefined) return h("span", { class: "muted" }, "none");
  const late = g.deadline * 1000 < Date.now() && (g.status === "active" || g.status === "suspended");
  return late ? h("span", { class: "error", title: "past its deadline" }, when(g.deadline), " (late)") : when(g.deadline);
}

/** Why a goal is suspended, in short: each contradicting memory's reason. */
const suspension = (g) => (g.conflicts || []).map((c) => `${c.reason}: ${c.detail}`).join("; ");

/** The page's goals as a tree: each goal followed by its subgoals (in their order) that
 * are on the page too, with their depth; a subgoal whose parent is elsewhere starts a branch. */
function tree(items) {
  const byId = new Map(items.map((g) => [g.id, g]));
  const rows = [];
  const seen = new Set();
  const visit = (g, depth) => {
    if (seen.has(g.id)) return;
    seen.add(g.id);
    rows.push({ goal: g, depth });
    for (const child of g.subgoals || []) if (byId.has(child)) visit(byId.get(child), depth + 1);
  };
  for (const g of items) if (!g.parent_id || !byId.has(g.parent_id)) visit(g, 0);
  for (const g of items) visit(g, 0);
  return rows;
}

export async function render(root, ctx) {
  if (ctx.arg) return detail(root, ctx);
  const { query, go } = ctx;
  const offset = Number(query.get("offset")) || 0;
  const status = query.get("status") || "";
  const choose = h("select", { name: "status", "aria-label": "status" },
    STATUSES.map((v) => h("option", { value: v, selected: v === status }, v || "all")));
  choose.addEventListener("change", () => go("goals", "", { status: choose.value }));
  const list = h("div");
  replace(root, h("h2", {}, "Goals"),
    h("p", { class: "muted" }, "Highest priority first, then the nearest deadline; subgoals under their goal."),
    h("div", { class: "toolbar" }, h("label", {}, "status", choose)), list);
  await load(list, get("/v1/goals", { limit: LIMIT, offset, status }), (page) => {
    if (!page.items.length) return empty(status ? `No ${status} goals.` : "No goals yet.");
    const rows = tree(page.items);
    return [
      table(["goal", "priority", "status", "progress", "deadline", "blocking on"], rows.map(({ goal: g, depth }) => [
        h("div", { style: `padding-left:${depth * 1.4}rem` }, depth ? h("span", { class: "muted" }, "↳ ") : "", goalLink(g),
          g.parent_id && !depth ? h("div", { class: "muted" }, "subgoal of ", link(`#/goals/${encodeURIComponent(g.parent_id)}`, "its goal")) : ""),
        h("div", {}, bar(g.priority), fixed(g.priority, 2)),
        h("div", {}, statusBadge(g), g.status === "suspended" ? h("div", { class: "muted wrap" }, suspension(g)) : ""),
        percent(g.progress),
        deadline(g),
        (g.blocking_on || []).length ? h("ul", { style: "margin:0;padding-left:1rem" }, g.blocking_on.map((b) => h("li", {}, b))) : h("span", { class: "muted" }, "nothing"),
      ]), { open: (i) => go("goals", rows[i].goal.id), widths: ["", "6.5rem", "10rem", "7rem", "10.5rem", "14rem"] }),
      pager({ offset, limit: LIMIT, count: page.items.length, next: page.next_offset, go: (o) => go("goals", "", { status, offset: o }) }),
    ];
  });
}

async function detail(root, { arg, go }) {
  const id = encodeURIComponent(arg);
  const goal = await get(`/v1/goals/${id}`);
  const subgoals = h("div"), lacks = h("div");
  const act = (path, { title, text, action, done }) => guarded(async () => {
    if (!(await confirmAction({ title, text, action }))) return;
    await post(`/v1/goals/${id}/${path}`);
    toast(done);
    go("goals", goal.id);
  });
  const open = goal.status === "active" || goal.status === "suspended";
  replace(root,
    h("h2", {}, goal.parent_id ? "Subgoal" : "Goal"),
    h("div", { class: "card" },
      h("p", { class: "wrap", style: "font-size:1.1rem;margin-top:0" }, goal.description),
      facts([
        ["status", statusBadge(goal)],
        ["priority", h("div", { style: "max-width:14rem" }, bar(goal.priority), fixed(goal.priority, 2))],
        ["progress", h("div", { style: "max-width:14rem" }, percent(goal.progress))],
        ["deadline", deadline(goal)],
        goal.parent_id && ["subgoal of", link(`#/goals/${encodeURIComponent(goal.parent_id)}`, h("code", {}, goal.parent_id))],
        ["set by", goal.origin],
        ["created", when(goal.created_at)],
        goal.last_worked && ["last worked on", when(goal.last_worked)],
        goal.completed_at && ["completed", when(goal.completed_at)],
        ["id", h("code", {}, goal.id)],
      ]),
      h("div", { class: "actions" },
        goal.status === "suspended" && h("button", {
          type: "button", class: "primary",
          onclick: act("resume", {
            title: "Resume this goal?",
            text: "Pursue it anyway: what memory says against it (below) is accepted. Abandon it later if you change your mind.",
            action: "Resume", done: "Goal resumed.",
          }),
        }, "Resume…"),
        open && h("button", {
          type: "button", class: "danger",
          onclick: act("abandon", {
            title: "Abandon this goal?",
            text: `"${goal.description}" and its open subgoals are given up (kept, with their history). This cannot be undone: add the goal again to pursue it.`,
            action: "Abandon", done: "Goal abandoned.",
          }),
        }, "Abandon…"))),
    goal.status === "suspended" || (goal.conflicts || []).length ? [
      h("h3", {}, "Why it is suspended"),
      (goal.conflicts || []).length
        ? table(["memory", "why", "detail"], goal.conflicts.map((c) => [
          link(`#/memory/${encodeURIComponent(c.memory_id)}`, c.text), badge(c.reason, "warn"), h("span", { class: "wrap" }, c.detail),
        ]), { widths: ["", "7rem", ""] })
        : empty("Nothing recorded."),
    ] : "",
    h("h3", {}, "Blocking on"),
    (goal.blocking_on || []).length ? h("ul", {}, goal.blocking_on.map((b) => h("li", {}, b))) : empty("Nothing blocks it."),
    h("h3", {}, "Subgoals"), subgoals,
    h("h3", {}, "What it lacks"), lacks);
  await Promise.all([
    (goal.subgoals || []).length
      ? load(subgoals, Promise.all(goal.subgoals.map((s) => get(`/v1/goals/${encodeURIComponent(s)}`))), (items) =>
        table(["subgoal", "status", "progress", "blocking on"], items.map((g) => [
          goalLink(g), statusBadge(g), percent(g.progress), (g.blocking_on || []).join("; ") || h("span", { class: "muted" }, "nothing"),
        ]), { open: (i) => go("goals", items[i].id), widths: ["", "8rem", "7rem", "14rem"] }))
      : replace(subgoals, empty("No subgoals.")),
    open
      ? load(lacks, get(`/v1/goals/${id}/anticipate`), (a) => [
        a.knowledge_gaps.length || a.skill_gaps.length
          ? table(["gap", "what", "why"], [
            ...a.knowledge_gaps.map((g) => [badge("knowledge"), g.topic, "memory holds nothing about it"]),
            ...a.skill_gaps.map((g) => [badge("skill", "warn"), g.task, g.reason.replaceAll("_", " ")]),
          ], { widths: ["7rem", "", "14rem"] })
          : empty("Nothing: memory knows what it refers to and has a strategy for each task."),
        a.known.length ? h("p", { class: "muted wrap" }, "Known: ", a.known.join(", ")) : "",
      ])
      : replace(lacks, empty(`Not asked of a ${goal.status} goal.`)),
  ]);
}
