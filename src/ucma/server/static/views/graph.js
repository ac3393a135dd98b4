// The memory graph around one memory, drawn in SVG: its outgoing links (one request a
// node: GET /v1/memories/{id}/links, each link with its type and weight), coloured by
// edge type (the types the engine writes have their own colour, any other type shares
// one). Drag to pan, wheel or +/- to zoom, a node's Space or click expands it, Enter or
// double-click opens it.
import { get, post } from "../api.js";
import { fixed, h, link, load, replace, s, table } from "../dom.js";

const TYPES = [
  ["followed_by", "#2456a6", "followed by (session order)"],
  ["derived_from", "#2b6b2f", "derived from (evidence)"],
  ["co_retrieved", "#b5651d", "co-retrieved"],
];
const OTHER = "#8a2be2";
const MAX_NEIGHBOURS = 40;

/** One memory's outgoing links, strongest first: [{memory, weight, type}]. */
async function neighbours(id) {
  const answer = await get(`/v1/memories/${encodeURIComponent(id)}/links`, { limit: MAX_NEIGHBOURS });
  return answer.links.map((l) => ({ memory: l.memory, weight: l.weight, type: l.edge_type }));
}

export async function render(root, { arg, go }) {
  if (!arg) {
    await picker(root, go);
    return;
  }
  const center = await get(`/v1/memories/${encodeURIComponent(arg)}`);
  const nodes = new Map([[center.id, { memory: center, x: 0, y: 0, expanded: false, depth: 0 }]]);
  const edges = new Map();
  const view = { x: -480, y: -280, w: 960, h: 560 };
  const layer = s("g");
  const svg = s("svg", { viewBox: `${view.x} ${view.y} ${view.w} ${view.h}`, tabindex: "0", role: "application", "aria-label": "Memory graph: arrows pan, + and - zoom" }, layer);
  const detail = h("div", { class: "card", "aria-live": "polite" }, h("p", { class: "muted" }, "Select a node to see it here."));
  const counts = h("span", { class: "muted" });

  const applyView = () => svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  const zoom = (factor) => {
    const cx = view.x + view.w / 2, cy = view.y + view.h / 2;
    view.w *= factor; view.h *= factor;
    view.x = cx - view.w / 2; view.y = cy - view.h / 2;
    applyView();
  };

  async function expand(id) {
    const node = nodes.get(id);
    if (!node || node.expanded) return;
    node.expanded = true;
    const found = await neighbours(id);
    const fresh = found.filter((n) => !nodes.has(n.memory.id));
    const radius = node.depth === 0 ? 220 : 130;
    const start = node.depth === 0 ? 0 : Math.atan2(node.y, node.x) - Math.PI / 2;
    const spread = node.depth === 0 ? 2 * Math.PI : Math.PI;
    fresh.forEach((n, i) => {
      const angle = start + (spread * (i + 0.5)) / Math.max(1, fresh.length);
      nodes.set(n.memory.id, { memory: n.memory, x: node.x + radius * Math.cos(angle), y: node.y + radius * Math.sin(angle), expanded: false, depth: node.depth + 1 });
    });
    for (const n of found) edges.set(`${id}>${n.memory.id}>${n.type}`, { from: id, to: n.memory.id, type: n.type, weight: n.weight });
    draw();
  }

  function select(id) {
    const node = nodes.get(id);
    const m = node.memory;
    replace(detail, h("h3", {}, m.kind, " · ", m.bank), h("p", { class: "wrap" }, m.content),
      h("div", { class: "actions" },
        h("button", { type: "button", onclick: () => expand(id), disabled: node.expanded }, "Expand"),
        h("button", { type: "button", onclick: () => go("graph", id) }, "Centre here"),
        link(`#/memory/${encodeURIComponent(id)}`, "Open memory")));
  }

  function draw() {
    const color = (type) => (TYPES.find(([t]) => t === type) || [0, OTHER])[1];
    const lines = [...edges.values()].map((e) => {
      const a = nodes.get(e.from), b = nodes.get(e.to);
      return s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: color(e.type), "stroke-width": 1 + 3 * e.weight, "stroke-opacity": 0.7, "marker-end": "url(#arrow)" },
        s("title", {}, `${e.type}, weight ${fixed(e.weight, 2)}`));
    });
    const circles = [...nodes.entries()].map(([id, n]) => {
      const label = n.memory.content.length > 38 ? `${n.memory.content.slice(0, 36)}…` : n.memory.content;
      const group = s("g", { class: "node", transform: `translate(${n.x},${n.y})`, tabindex: "0", role: "button", "aria-label": `${n.memory.kind}: ${n.memory.content}`, dataset: { id } },
        s("circle", { r: n.depth === 0 ? 16 : 10, fill: n.depth === 0 ? "#1d1d1b" : n.expanded ? "#2456a6" : "#7d9fd6" }),
        s("text", { x: 14, y: 4 }, label),
        s("title", {}, n.memory.content));
      group.addEventListener("click", () => { select(id); expand(id); });
      group.addEventListener("dblclick", () => go("memory", id));
      group.addEventListener("keydown", (event) => {
        if (event.key === "Enter") go("memory", id);
        else if (event.key === " ") { event.preventDefault(); select(id); expand(id); }
      });
      group.addEventListener("focus", () => select(id));
      return group;
    });
    replace(layer,
      s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 22, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, s("path", { d: "M0,0 L10,5 L0,10 z", fill: "#888" }))),
      lines, circles);
    replace(counts, `${nodes.size} memories, ${edges.size} edges`);
  }

  // Pan by dragging the background; zoom with the wheel.
  let drag = null;
  svg.addEventListener("pointerdown", (event) => {
    if (event.target.closest(".node")) return;
    drag = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y };
    svg.setPointerCapture(event.pointerId);
  });
  svg.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const scale = view.w / svg.clientWidth;
    view.x = drag.vx - (event.clientX - drag.x) * scale;
    view.y = drag.vy - (event.clientY - drag.y) * scale;
    applyView();
  });
  svg.addEventListener("pointerup", () => { drag = null; });
  svg.addEventListener("wheel", (event) => { event.preventDefault(); zoom(event.deltaY > 0 ? 1.15 : 1 / 1.15); }, { passive: false });
  svg.addEventListener("keydown", (event) => {
    const step = view.w / 10;
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    if (moves[event.key] && event.target === svg) { view.x += moves[event.key][0]; view.y += moves[event.key][1]; applyView(); event.preventDefault(); }
    else if (event.key === "+" || event.key === "=") zoom(1 / 1.2);
    else if (event.key === "-") zoom(1.2);
  });

  replace(root,
    h("h2", {}, "Graph around a memory"),
    h("p", {}, link(`#/memory/${encodeURIComponent(center.id)}`, center.content), " ", counts),
    h("div", { class: "grid2", style: "grid-template-columns:minmax(0,3fr) minmax(0,1fr)" },
      h("div", { class: "graph-wrap" }, svg,
        h("div", { class: "legend" }, [...TYPES, ["other", OTHER, "any other type (its name on hover)"]].map(([, c, label]) =>
          h("span", {}, h("span", { style: `color:${c}` }, "━ "), label))),
        h("div", { class: "zoom" },
          h("button", { type: "button", "aria-label": "Zoom in", onclick: () => zoom(1 / 1.2) }, "+"),
          h("button", { type: "button", "aria-label": "Zoom out", onclick: () => zoom(1.2) }, "−"))),
      detail));
  draw();
  select(center.id);
  await expand(center.id);
  if (edges.size === 0) detail.append(h("p", { class: "empty" }, "This memory has no outgoing links."));
}

async function picker(root, go) {
  const results = h("div");
  const input = h("input", { type: "search", name: "q", placeholder: "Find a memory to centre on…" });
  const form = h("form", { class: "toolbar", role: "search" }, h("label", {}, "Memory", input), h("button", { type: "submit", class: "primary" }, "Find"));
  const show = (items) => items.length
    ? table(["memory", "kind"], items.map((m) => [link(`#/graph/${encodeURIComponent(m.id)}`, m.content), m.kind]), { open: (i) => go("graph", items[i].id) })
    : h("p", { class: "empty" }, "No memories.");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value.trim()) load(results, post("/v1/memories/search", { query: input.value.trim(), limit: 20 }), (a) => show(a.results));
  });
  replace(root, h("h2", {}, "Graph"), h("p", { class: "muted" }, "Choose the memory to draw the graph around."), form, results);
  await load(results, get("/v1/memories", { limit: 20 }), (page) => show(page.items));
}
