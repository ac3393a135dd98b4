// Scopes: every (user, agent) this caller may look at, with its memory counts per kind.
import { api, session } from "../api.js";
import { h, load, number, pager, replace, table, td } from "../dom.js";

const LIMIT = 50;
const KINDS = ["episodic", "semantic", "procedural", "learning"];

export async function render(root, { query, go }) {
  const offset = Number(query.get("offset")) || 0;
  const list = h("div");
  replace(root, h("h2", {}, "Scopes"),
    h("p", { class: "muted" }, session.key
      ? "The scopes of your API key's user."
      : "Every scope of this database (local mode). Pick one to inspect it."),
    list);
  const params = { limit: LIMIT, offset };
  await load(list, api("GET", "/v1/scopes", { params, scoped: false }), (page) => {
    if (!page.items.length) return h("p", { class: "empty" }, "No memories yet in any scope you can see.");
    const open = (index) => {
      const scope = page.items[index];
      session.setScope(scope.user_id, scope.agent_id);
      go("memories");
    };
    return [
      table(["user", "agent", ...KINDS.map((k) => ({ text: k, num: true })), { text: "total", num: true }],
        page.items.map((scope) => [
          h("a", { href: "#/memories", onclick: (event) => { event.preventDefault(); open(page.items.indexOf(scope)); } }, scope.user_id),
          scope.agent_id,
          ...KINDS.map((k) => td({ class: "num" }, number(scope.memories[k] || 0))),
          td({ class: "num" }, number(Object.values(scope.memories).reduce((a, b) => a + b, 0))),
        ]), { open }),
      pager({ offset, limit: LIMIT, count: page.items.length, next: page.next_offset, go: (o) => go("scopes", "", { offset: o }) }),
    ];
  });
}
