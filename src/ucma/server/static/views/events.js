// The live event stream: the latest events, then every new one as it is appended
// (polled with after_seq every few seconds while the view is open; Pause stops it).
import { get } from "../api.js";
import { badge, h, link, replace, when } from "../dom.js";

const KEEP = 500;
const EVERY_MS = 3000;

export async function render(root) {
  const rows = h("tbody");
  const state = h("span", { class: "muted", role: "status" });
  let paused = false;
  let timer = null;
  let last = 0;
  const pause = h("button", { type: "button", onclick: () => { paused = !paused; replace(pause, paused ? "Resume" : "Pause"); } }, "Pause");
  replace(root, h("h2", {}, "Live events"),
    h("div", { class: "toolbar" }, pause, state),
    h("table", { class: "events" },
      h("thead", {}, h("tr", {}, h("th", { style: "width:5rem" }, "seq"), h("th", { style: "width:10.5rem" }, "when"), h("th", { style: "width:12rem" }, "type"), h("th", {}, "what"))),
      rows));
  const row = (e) => h("tr", { dataset: { seq: e.seq } },
    h("td", { class: "num" }, String(e.seq)), h("td", {}, when(e.occurred_at)), h("td", {}, badge(e.type)),
    h("td", {}, e.payload.memory_id ? [link(`#/memory/${encodeURIComponent(e.payload.memory_id)}`, h("code", {}, e.payload.memory_id)), " "] : "",
      h("code", { class: "wrap" }, JSON.stringify(e.payload))));
  const latest = await get("/v1/events", { newest_first: true, limit: 100 });
  rows.append(...latest.items.map(row));
  last = latest.items.length ? latest.items[0].seq : 0;
  replace(state, `${latest.items.length} latest events; watching for new ones`);
  const poll = async () => {
    if (!paused) {
      try {
        let page;
        do {
          page = await get("/v1/events", { after_seq: last, limit: 200 });
          for (const e of page.items) rows.prepend(row(e));
          if (page.items.length) last = page.items.at(-1).seq;
        } while (page.next_after_seq !== null);
        while (rows.children.length > KEEP) rows.lastChild.remove();
        replace(state, `watching · last seq ${last} · ${when(Date.now() / 1000)}`);
      } catch (error) {
        replace(state, h("span", { class: "error" }, error.message));
      }
    }
    timer = setTimeout(poll, EVERY_MS);
  };
  timer = setTimeout(poll, EVERY_MS);
  return () => clearTimeout(timer);
}
