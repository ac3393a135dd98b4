// Opinions (seed 000's opinion bank): what the agent believes, how confident, on what
// evidence, and what each replaced.
import { get } from "../api.js";
import { badge, bar, fixed, h, link, load, pager, replace, table, when } from "../dom.js";

const LIMIT = 50;

export async function render(root, { arg, query, go }) {
  if (arg) return detail(root, arg);
  const offset = Number(query.get("offset")) || 0;
  const replaced = query.get("replaced") === "1";
  const box = h("input", { type: "checkbox", checked: replaced });
  box.addEventListener("change", () => go("opinions", "", { replaced: box.checked ? "1" : "" }));
  const body = h("div");
  replace(root, h("h2", {}, "Opinions"), h("div", { class: "toolbar" }, h("label", {}, "replaced too", box)), body);
  await load(body, get("/v1/opinions", { limit: LIMIT, offset, include_replaced: replaced || undefined }), (page) => {
    if (!page.items.length) return h("p", { class: "empty" }, "No opinions formed yet.");
    return [
      table(["topic", "stance", "confidence", "status", "evidence", "updated"], page.items.map((o) => [
        link(`#/opinions/${encodeURIComponent(o.id)}`, o.topic),
        o.stance,
        h("div", {}, bar(o.confidence), fixed(o.confidence, 2)),
        badge(o.status, o.status === "current" ? "ok" : "warn"),
        String(o.evidence.length),
        when(o.updated_at),
      ]), { open: (i) => go("opinions", page.items[i].id), widths: ["", "", "7rem", "7rem", "5rem", "10.5rem"] }),
      pager({ offset, limit: LIMIT, count: page.items.length, next: page.next_offset, go: (o) => go("opinions", "", { replaced: replaced ? "1" : "", offset: o }) }),
    ];
  });
}

async function detail(root, id) {
  const body = h("div");
  replace(root, h("h2", {}, "Opinion"), body);
  await load(body, Promise.all([get(`/v1/opinions/${encodeURIComponent(id)}`), get(`/v1/opinions/${encodeURIComponent(id)}/history`)]), ([opinion, history]) => [
    h("div", { class: "card" }, h("p", { style: "font-size:1.1rem;margin-top:0" }, `${opinion.holder || "The user"}: ${opinion.stance}`),
      h("p", {}, `${opinion.topic} · confidence ${fixed(opinion.confidence, 2)} · `, badge(opinion.status),
        opinion.memory_id ? [" · ", link(`#/memory/${encodeURIComponent(opinion.memory_id)}`, "its memory")] : "")),
    h("h3", {}, "Evidence"),
    table(["when", "evidence", "supports", { text: "weight", num: true }], opinion.evidence.map((e) => [
      when(e.at), e.memory_id ? link(`#/memory/${encodeURIComponent(e.memory_id)}`, e.text) : e.text, e.supports ? badge("supports", "ok") : badge("against", "bad"), fixed(e.weight, 2),
    ]), { widths: ["10.5rem", "", "7rem", "5rem"] }),
    h("h3", {}, "Stances held on this topic, oldest first"),
    table(["stance", "confidence", "status", "since"], history.items.map((o) => [
      o.id === opinion.id ? h("strong", {}, o.stance) : link(`#/opinions/${encodeURIComponent(o.id)}`, o.stance),
      fixed(o.confidence, 2), badge(o.status, o.status === "current" ? "ok" : "warn"), when(o.created_at),
    ]), { widths: ["", "7rem", "7rem", "10.5rem"] }),
  ]);
}
