// Stats: the scope's counts and sizes, as the API reports them (GET /v1/stats).
import { get } from "../api.js";
import { h, number, replace, table, td } from "../dom.js";

function flatten(value, prefix = "") {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
  }
  return [[prefix, value]];
}

export async function render(root) {
  const stats = await get("/v1/stats");
  const counts = stats.memories || {};
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  replace(root, h("h2", {}, "Stats"),
    h("div", { class: "grid3" },
      h("div", { class: "card" }, h("h3", {}, "Memories"), h("p", { style: "font-size:2rem;margin:0" }, number(total)),
        h("p", { class: "muted" }, Object.entries(counts).map(([k, v]) => `${k} ${number(v)}`).join(" · "))),
      h("div", { class: "card" }, h("h3", {}, "Graph"), h("p", { style: "font-size:2rem;margin:0" }, number(stats.graph?.node_count)),
        h("p", { class: "muted" }, `${number(stats.graph?.edge_count)} edges`)),
      h("div", { class: "card" }, h("h3", {}, "Facts"), h("p", { style: "font-size:2rem;margin:0" }, number(stats.semantic?.fact_count)),
        h("p", { class: "muted" }, `${number(stats.semantic?.entity_count)} entities`))),
    h("h3", {}, "Everything the API reports"),
    table(["statistic", { text: "value", num: true }], flatten(stats).filter(([k]) => k !== "memories" && !k.startsWith("memories."))
      .map(([k, v]) => [h("code", {}, k), td({ class: "num" }, typeof v === "number" ? number(v) : String(v ?? ""))]), { widths: ["", "16rem"] }));
}
