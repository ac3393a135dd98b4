// Building blocks of the views: elements from data (text is always set as text, never
// parsed as HTML), numbers and times, the confirmation dialog, toasts with undo, the
// pager and small SVG charts.

const SVG = "http://www.w3.org/2000/svg";

/** An element: h("td", {class: "num"}, "3") ; children are nodes, strings or arrays. */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

/** An SVG element, as h. */
export function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

function setAttrs(node, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

export const number = (value) => (value === undefined || value === null ? "" : Number(value).toLocaleString("en"));
export const fixed = (value, digits = 2) =>
  value === undefined || value === null ? "" : Number(value).toFixed(digits);
export function when(epoch) {
  if (epoch === undefined || epoch === null) return "";
  return new Date(epoch * 1000).toISOString().replace("T", " ").slice(0, 19);
}
export const link = (href, ...children) => h("a", { href }, ...children);
export const badge = (text, tone = "") => h("span", { class: `badge ${tone}` }, text);
export const empty = (text) => h("p", { class: "empty" }, text);
export function bar(value) {
  const pct = Math.max(0, Math.min(1, Number(value) || 0)) * 100;
  return h("div", { class: "bar", title: fixed(value, 3), role: "img", "aria-label": fixed(value, 3) },
    h("span", { style: `width:${pct.toFixed(1)}%` }));
}

/** Definition list of [label, value] pairs (values may be nodes). */
export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

/** A table; rows are arrays of cells; `open(row index)` makes rows keyboard-openable. */
export function table(headers, rows, { open, widths = [] } = {}) {
  const head = h("tr", {}, headers.map((label, i) =>
    h("th", { class: label.num ? "num" : "", style: widths[i] ? `width:${widths[i]}` : null }, label.text ?? label)));
  const body = rows.map((cells, index) => {
    const row = h("tr", open ? { class: "row", tabindex: "0", dataset: { index } } : {},
      cells.map((cell) => (cell instanceof Node && cell.tagName === "TD" ? cell : h("td", {}, cell))));
    if (open) {
      row.addEventListener("click", (event) => {
        if (!event.target.closest("a,button,input")) open(index);
      });
      row.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && event.target === row) open(index);
      });
    }
    return row;
  });
  return h("table", {}, h("thead", {}, head), h("tbody", {}, body));
}

export const td = (attrs, ...children) => h("td", attrs, ...children);

/** Ask before an action; resolves true when confirmed. */
export function confirmAction({ title, text, action }) {
  const dialog = document.getElementById("confirm");
  replace(document.getElementById("confirm-title"), title);
  replace(document.getElementById("confirm-text"), text);
  replace(document.getElementById("confirm-ok"), action);
  dialog.returnValue = "";
  dialog.showModal();
  document.getElementById("confirm-cancel").focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

/** A message at the bottom right; with `undo`, a button that calls it. */
export function toast(message, { undo, tone } = {}) {
  const box = document.getElementById("toasts");
  const item = h("div", { class: `toast ${tone || ""}` }, h("span", {}, message));
  const close = () => item.remove();
  if (undo) {
    item.append(h("button", {
      type: "button",
      onclick: async () => {
        close();
        await undo();
      },
    }, "Undo"));
  }
  item.append(h("button", { type: "button", "aria-label": "Dismiss", onclick: close }, "×"));
  box.append(item);
  setTimeout(close, undo ? 20000 : 6000);
}

/** Page controls for offset paging: "1–100 of 100,000", previous, next, go to page. */
export function pager({ offset, limit, total, count, next, go }) {
  const last = total === undefined ? null : Math.max(0, Math.ceil(total / limit) - 1);
  const page = Math.floor(offset / limit);
  const input = h("input", { type: "number", min: 1, max: last === null ? null : last + 1, value: page + 1, "aria-label": "Page" });
  return h("div", { class: "pager" },
    h("span", {}, count ? `${number(offset + 1)}–${number(offset + count)}` : "none",
      total !== undefined ? ` of ${number(total)}` : ""),
    h("button", { type: "button", disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)), "data-key": "prev" }, "← Previous"),
    h("button", { type: "button", disabled: next === null || next === undefined, onclick: () => go(next), "data-key": "next" }, "Next →"),
    last !== null && h("form", {
      onsubmit: (event) => {
        event.preventDefault();
        const wanted = Math.min(Math.max(1, Number(input.value) || 1), last + 1);
        go((wanted - 1) * limit);
      },
    }, h("label", {}, "page ", input, ` of ${number(last + 1)}`), " ", h("button", { type: "submit" }, "Go")));
}

/** A line chart of points [{x, y}] (y in [0, 1] unless `max`), with axis labels. */
export function lineChart(points, { width = 520, height = 180, xLabel = "", yLabel = "", max = 1, min = 0, markers = [] } = {}) {
  const pad = { l: 40, r: 10, t: 10, b: 28 };
  const xs = points.map((p) => p.x);
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1e-9);
  const X = (x) => pad.l + ((x - x0) / (x1 - x0)) * (width - pad.l - pad.r);
  const Y = (y) => height - pad.b - ((y - min) / (max - min || 1)) * (height - pad.t - pad.b);
  const path = points.map((p, i) => `${i ? "L" : "M"}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join(" ");
  return s("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `${yLabel} by ${xLabel}` },
    s("line", { x1: pad.l, y1: Y(min), x2: width - pad.r, y2: Y(min), stroke: "#ccc" }),
    s("line", { x1: pad.l, y1: Y(max), x2: pad.l, y2: Y(min), stroke: "#ccc" }),
    s("text", { x: 4, y: Y(max) + 4 }, fixed(max, 2)),
    s("text", { x: 4, y: Y(min) }, fixed(min, 2)),
    s("text", { x: pad.l, y: height - 6 }, String(points.length ? points[0].label ?? x0 : "")),
    s("text", { x: width - pad.r, y: height - 6, "text-anchor": "end" }, String(points.length ? points.at(-1).label ?? x1 : "")),
    s("text", { x: width / 2, y: height - 6, "text-anchor": "middle" }, xLabel),
    s("path", { d: path, fill: "none", stroke: "#2456a6", "stroke-width": 2 }),
    points.map((p) => s("circle", { cx: X(p.x), cy: Y(p.y), r: points.length > 40 ? 0 : 3, fill: "#2456a6" }, s("title", {}, p.title || `${fixed(p.y, 3)}`))),
    markers.map((m) => s("circle", { cx: X(m.x), cy: Y(m.y), r: 5, fill: m.color || "#a12a1f" }, s("title", {}, m.title || ""))));
}

/** "loading..." while `promise` runs, then what `render` makes of its value, or the error. */
export async function load(node, promise, render) {
  replace(node, h("p", { class: "spinner" }, "Loading…"));
  try {
    const value = await promise;
    replace(node, render(value));
  } catch (error) {
    replace(node, h("p", { class: "error", role: "alert" }, error.message || String(error)));
  }
}

/** An event handler that shows a failure as a toast instead of losing it. */
export function guarded(handler) {
  return async (...args) => {
    try {
      await handler(...args);
    } catch (error) {
      toast(error.message || String(error), { tone: "error" });
    }
  };
}
