"""The root page: what the service is, what it holds, and where to go next.

In local mode it lists every scope in the database with its memory counts and, for a
chosen scope, every statistic. With API keys it shows no data at all (a browser sends no
key), only the service's version and links.
"""

import html
import json
from typing import Any

import ucma

__all__ = ["render_page"]


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, item in value.items():
            rows.extend(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return rows
    return [(prefix, value)]


def _scopes_table(scopes: list[tuple[str, str, dict[str, int]]]) -> str:
    if not scopes:
        return "<p>The database holds no memories yet.</p>"
    kinds = list(scopes[0][2])
    head = "".join(f"<th>{html.escape(k)}</th>" for k in kinds)
    rows = "".join(
        "<tr>"
        f'<td><a href="/?user_id={html.escape(user, quote=True)}'
        f'&amp;agent_id={html.escape(agent, quote=True)}">'
        f"{html.escape(user)} / {html.escape(agent)}</a></td>"
        + "".join(f"<td>{counts.get(k, 0)}</td>" for k in kinds)
        + "</tr>"
        for user, agent, counts in scopes
    )
    return f"<h2>Scopes</h2><table><tr><th>user / agent</th>{head}</tr>{rows}</table>"


def _stats_table(stats: dict[str, Any]) -> str:
    scope = html.escape(f"{stats.get('user_id')} / {stats.get('agent_id')}")
    counts = stats.get("memories") or {}
    count_rows = "".join(
        f"<tr><td>{html.escape(str(kind))}</td><td>{html.escape(str(n))}</td></tr>"
        for kind, n in counts.items()
    )
    detail_rows = "".join(
        f"<tr><td>{html.escape(key)}</td><td>{html.escape(json.dumps(value))}</td></tr>"
        for key, value in _flatten({k: v for k, v in stats.items() if k != "memories"})
    )
    return (
        f"<h2>Scope {scope}</h2>"
        f"<table><tr><th>kind</th><th>memories</th></tr>{count_rows}</table>"
        f"<details><summary>All statistics</summary><table>{detail_rows}</table></details>"
    )


def render_page(
    *,
    database: str | None,
    user_id: str = "",
    agent_id: str = "",
    scopes: list[tuple[str, str, dict[str, int]]] | None = None,
    stats: dict[str, Any] | None = None,
) -> str:
    """The page; ``database`` None means keys are required and nothing is shown."""
    if database is None:
        body = (
            "<p>This service requires API keys: send <code>Authorization: Bearer &lt;key&gt;"
            "</code> to the API (create keys with <code>ucma keys create --user ...</code>).</p>"
        )
    else:
        body = (
            f"<p>Database <code>{html.escape(database)}</code> (local mode: bound to this "
            "machine, no API keys).</p>"
            '<form method="get" action="/">'
            f'<label>user_id <input name="user_id" value="{html.escape(user_id, quote=True)}" '
            "required></label> "
            f'<label>agent_id <input name="agent_id" value="{html.escape(agent_id, quote=True)}"'
            ' placeholder="default"></label> <button type="submit">Show</button></form>'
            + (_stats_table(stats) if stats is not None else "")
            + _scopes_table(scopes or [])
        )
    return _PAGE.format(version=html.escape(ucma.__version__), body=body)


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>UCMA memory</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; }}
table {{ border-collapse: collapse; margin: .5rem 0; }}
td, th {{ border: 1px solid #ccc; padding: .2rem .6rem; text-align: left; }}
</style></head><body>
<h1>UCMA memory service</h1>
<p>Version {version}. REST API under <code>/v1</code>, docs at <a href="/docs">/docs</a>,
health at <a href="/v1/health">/v1/health</a>, MCP (streamable HTTP) at <code>/mcp</code>.</p>
{body}
</body></html>
"""
