// The self-model and world model (seed 000's predictive paradigm): each capability's
// competence (estimated accuracy with its credible interval, calibration of the
// predictions made before attempts, failure modes, weak or not), what to learn next,
// and the world model's transitions (an action in a context led to an outcome).
import { get } from "../api.js";
import { badge, bar, empty, fixed, h, load, pager, replace, table, td, when } from "../dom.js";

const LIMIT = 50;

/** Accuracy as a bar with its interval drawn as a line over it. */
function accuracy(c) {
  const pct = (v) => `${(Math.max(0, Math.min(1, v)) * 100).toFixed(1)}%`;
  return h("div", { title: `estimated ${fixed(c.accuracy, 2)}, 95 % between ${fixed(c.low, 2)} and ${fixed(c.high, 2)}` },
    h("div", { class: "bar interval", role: "img", "aria-label": `${fixed(c.accuracy, 2)} (${fixed(c.low, 2)} to ${fixed(c.high, 2)})` },
      h("span", { style: `width:${pct(c.accuracy)}` }),
      h("i", { style: `left:${pct(c.low)};width:calc(${pct(c.high)} - ${pct(c.low)})` })),
    `${fixed(c.accuracy, 2)} `, h("span", { class: "muted" }, `(${fixed(c.low, 2)}–${fixed(c.high, 2)})`));
}

function calibration(c) {
  if (c.mean_predicted === null || c.mean_predicted === undefined) return h("span", { class: "muted" }, "no prediction made");
  const gap = c.mean_predicted - (c.actual_rate ?? 0);
  const side = Math.abs(gap) < 0.1 ? badge("calibrated", "ok") : badge(gap > 0 ? "overconfident" : "underconfident", "warn");
  return h("div", {}, side, h("div", { class: "muted" },
    `predicted ${fixed(c.mean_predicted, 2)}, actual ${fixed(c.actual_rate, 2)}; error ${fixed(c.calibration_error, 2)}, Brier ${fixed(c.brier, 3)}`));
}

export async function render(root, { query, go }) {
  const offset = Number(query.get("offset")) || 0;
  const competences = h("div"), priorities = h("div"), world = h("div");
  replace(root, h("h2", {}, "Self-model"),
    h("p", { class: "muted" }, "What the agent knows of its own competence, from the attempts it recorded; most attempted first."),
    competences,
    h("div", { class: "grid2" },
      h("section", { class: "card" }, h("h3", {}, "What to learn next"), priorities),
      h("section", { class: "card" }, h("h3", {}, "World model: what actions led to"), world)));
  await Promise.all([
    load(competences, get("/v1/self/competences", { limit: LIMIT, offset }), (page) => (page.items.length ? [
      table(["capability", { text: "attempts", num: true }, "accuracy (95 % interval)", "calibration", "failure modes", "last attempt"], page.items.map((c) => [
        h("div", {}, h("strong", {}, c.capability), c.is_weak ? [" ", badge("weak domain", "bad")] : ""),
        td({ class: "num" }, `${c.successes} / ${c.attempts}`),
        accuracy(c),
        calibration(c),
        c.failure_modes.length
          ? h("ul", { style: "margin:0;padding-left:1rem" }, c.failure_modes.map((m) => h("li", {}, `${m.mode} `, h("span", { class: "muted" }, `×${m.count}`))))
          : h("span", { class: "muted" }, "none"),
        when(c.updated_at),
      ]), { widths: ["", "6rem", "15rem", "16rem", "", "10.5rem"] }),
      pager({ offset, limit: LIMIT, count: page.items.length, next: page.next_offset, go: (o) => go("self", "", { offset: o }) }),
    ] : empty("No attempt recorded yet (POST /v1/self/competences)."))),
    load(priorities, get("/v1/self/learning-priorities", { limit: 10 }), (page) => (page.items.length
      ? table(["what", { text: "impact", num: true }], page.items.map((p) => [
        h("div", {}, badge(p.type.replaceAll("_", " "), p.type === "weak_domain" ? "bad" : "warn"), " ", p.description),
        td({ class: "num" }, fixed(p.impact, 2)),
      ]), { widths: ["", "5rem"] })
      : empty("Nothing stands out: no recurring failure, weak domain or gap blocking a goal."))),
    load(world, get("/v1/world/transitions", { limit: 20 }), (page) => (page.items.length
      ? table(["action → outcome", "when", { text: "reliability", num: true }], page.items.map((t) => [
        h("div", { class: "wrap" }, t.action, " → ", h("strong", {}, t.outcome)),
        h("span", { class: "muted wrap" }, Object.entries(t.context).map(([k, v]) => `${k}: ${v}`).join(", ") || "any context"),
        td({ class: "num", title: `${t.confirmations} confirmed, ${t.errors} not` }, fixed(t.reliability, 2)),
      ]), { widths: ["", "", "6rem"] })
      : empty("No transition observed yet."))),
  ]);
}
