// Timeline: the episodes of a time range, oldest first, grouped by session, a page at a time.
import { get } from "../api.js";
import { badge, h, link, load, pager, replace, when } from "../dom.js";

const LIMIT = 200;
const DAY = 86400;

const day = (epoch) => new Date(epoch * 1000).toISOString().slice(0, 10);
const epochOf = (text, fallback) => {
  const value = Date.parse(`${text}T00:00:00Z`);
  return Number.isNaN(value) ? fallback : value / 1000;
};

export async function render(root, { query, go }) {
  const now = Date.now() / 1000;
  const start = epochOf(query.get("from") || "", now - 30 * DAY);
  const end = epochOf(query.get("to") || "", now) + (query.get("to") ? DAY - 1 : 0);
  const offset = Number(query.get("offset")) || 0;
  const wanted = query.get("session") || "";
  const from = h("input", { type: "date", name: "from", value: day(start) });
  const to = h("input", { type: "date", name: "to", value: day(Math.min(end, now)) });
  const form = h("form", { class: "toolbar" }, h("label", {}, "from", from), h("label", {}, "to", to),
    h("button", { type: "submit", class: "primary" }, "Show"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    go("timeline", "", { from: from.value, to: to.value, session: wanted });
  });
  const body = h("div");
  replace(root, h("h2", {}, "Timeline of episodes and sessions"), form, body);
  await load(body, get("/v1/episodes", { start, end, limit: LIMIT, offset }), (page) => {
    if (!page.items.length) return h("p", { class: "empty" }, "No episodes in this range.");
    const sessions = [];
    for (const episode of page.items) {
      const last = sessions.at(-1);
      if (last && last.id === episode.session_id) last.items.push(episode);
      else sessions.push({ id: episode.session_id, items: [episode] });
    }
    const move = (o) => go("timeline", "", { from: from.value, to: to.value, session: wanted, offset: o });
    const blocks = sessions.map((session) => h("div", { class: "session", dataset: { session: session.id } },
      h("h3", {}, "Session ", h("code", {}, session.id || "none"), " ",
        session.id === wanted ? badge("selected", "ok") : "",
        h("span", { class: "muted" }, ` · ${session.items.length} episodes from ${when(session.items[0].timestamp)}`)),
      session.items.map((e) => h("div", { class: "item" },
        h("span", { class: "muted" }, when(e.timestamp)),
        h("span", {}, badge(e.source), " ", link(`#/memory/${encodeURIComponent(e.id)}`, e.content))))));
    const view = [pager({ offset, limit: LIMIT, count: page.items.length, next: page.next_offset, go: move }), h("div", { class: "timeline" }, blocks)];
    queueMicrotask(() => body.querySelector(`[data-session="${CSS.escape(wanted)}"]`)?.scrollIntoView());
    return view;
  });
}
