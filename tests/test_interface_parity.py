"""Every public operation in every interface, or a written reason why not.

``OPERATIONS`` names each operation in Python (a ``Memory`` method), REST (method and
OpenAPI path), MCP (a tool) and the CLI (a command). Where an interface lacks it, an
``Absent`` says why: a deliberate choice (``Absent(reason)``), or a gap to close
(``Absent(NOT_YET)``, the list that must shrink). The test lists each interface's real
operations (``Memory``'s public methods, the app's OpenAPI paths, the MCP server's
``tools/list`` through the SDK client, Typer's command tree) and fails when an operation
is in an interface but not in the table, or in the table but not in its interface: a new
method, route, tool or command needs a row, and a row needs the real thing or a reason.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from mcp import Client

from ucma.cli.main import app as cli_app
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import create_mcp_server, fixed_scope
from ucma.server import create_app
from ucma.sync import Memory


@dataclass(frozen=True)
class Absent:
    """Why an interface does not have an operation."""

    reason: str


NOT_YET = "not yet: a gap to close"

# Deliberate exceptions, each written once.
SEED_NAME = Absent(
    "the seeds' name of search (remember) or add (observe): this interface offers the "
    "familiar name only, so it never shows two names for one operation"
)
OLD_LIST = Absent("list is get_all without the total, kept in Python for existing code")
IN_PROCESS = Absent(
    "in-process state (working memory, the current session, a running sleep cycle): a CLI "
    "call is its own process, and over the network the service holds it per scope"
)
PY_OBJECT = Absent("returns or takes a live Python object (a source of truth, an iterator)")
KEYS = Absent(
    "administration of API keys: on the machine that holds the database (ucma keys); a key "
    "cannot mint or list keys"
)
OPERATOR = Absent(
    "an operator's task on the whole database or process (not a scope's): ucma serve and "
    "the gardener run it, or the CLI on the machine"
)
NOT_FOR_AGENTS = Absent(
    "not offered to agents: bulk transfer, every tenant's counters, or the originals of "
    "tokenised personal data"
)
ERASE_SCOPE = Absent(
    "an agent must not erase a whole user's memory for good; it has delete_all, confirmed, "
    "which keeps history"
)
SESSION_RETURNED = Absent(
    "new_session returns the id, and no tool takes a session id, so an agent has no use "
    "for the current one"
)
AGENT_ANSWERS = Absent("the agent writes the answer itself, from recall's results")
CONFLICTS_INLINE = Absent("facts and assert_fact return the conflicts of the facts they show")
SERVICE_ONLY = Absent("about the running service itself, not an operation on memory")
PROCESS_COMMAND = Absent("a command that starts a process or works on files: no Python method")
GARDENER = Absent("the gardener runs it for every scope (ucma gardener run, ucma serve)")
ACROSS_USERS = Absent(
    "works across every user of the database (patterns shared between tenants): the "
    "operator runs it on the machine, never one tenant's key or agent"
)
SAME_AS_CONTEXT = Absent(
    "the facade's second name for context (the same text): this interface shows one name"
)
CURVE = Absent(
    "the curve ahead is for drawing (the inspector page); agents and the shell read the value "
    "now with retention"
)
FUNCTION = Absent("a module function (ucma.restore_backup): it works on a closed database")
STORE_COPY = Absent(
    "a module function (ucma.migrate): it copies a whole database, every tenant, into another"
)


@dataclass(frozen=True)
class Op:
    python: str | Absent
    rest: str | tuple[str, ...] | Absent
    mcp: str | Absent
    cli: str | Absent


OPERATIONS: list[Op] = [
    # The familiar calls.
    Op("add", "POST /v1/memories", "add", "add"),
    Op("search", "POST /v1/memories/search", "search", "search"),
    Op("get", "GET /v1/memories/{memory_id}", "get", "get"),
    Op("get_all", "GET /v1/memories", "get_all", "get-all"),
    Op("update", "PUT /v1/memories/{memory_id}", "update", "update"),
    Op("delete", "DELETE /v1/memories/{memory_id}", "delete", "delete"),
    Op("delete_all", "DELETE /v1/memories", "delete_all", "delete-all"),
    Op("history", "GET /v1/memories/{memory_id}/history", "history", "history"),
    Op("archive", "POST /v1/memories/{memory_id}/archive", "archive", "archive"),
    Op("unarchive", "POST /v1/memories/{memory_id}/unarchive", "unarchive", "unarchive"),
    Op("list", OLD_LIST, OLD_LIST, OLD_LIST),
    # The seeds' names.
    Op("observe", "POST /v1/observe", SEED_NAME, "observe"),
    Op("observe_many", "POST /v1/observe/batch", SEED_NAME, SEED_NAME),
    Op("remember", "POST /v1/remember", SEED_NAME, SEED_NAME),
    Op("recall", "POST /v1/recall", "recall", "recall"),
    Op("answer", "POST /v1/chat", AGENT_ANSWERS, "answer"),
    Op("learn", "POST /v1/learn", "learn", "learn"),
    Op("validate_learning", "POST /v1/learnings/{learning_id}/validate", "validate_learning",
       "validate-learning"),
    Op("find_learnings", "GET /v1/learnings", "find_learnings", "find-learnings"),
    # Facts and conflicts.
    Op("assert_fact", "POST /v1/facts", "assert_fact", "assert-fact"),
    Op("assert_fact_detailed", "POST /v1/facts", "assert_fact", "assert-fact"),
    Op("facts_about", "GET /v1/facts", "facts", "facts"),
    Op("fact_history", "GET /v1/facts/history", "fact_history", "fact-history"),
    Op("traverse", "GET /v1/facts/traverse", "traverse", "facts"),
    Op("conflicts", "GET /v1/conflicts", CONFLICTS_INLINE, "conflicts"),
    Op("resolve_conflict", "POST /v1/conflicts/{conflict_id}/resolve", "resolve_conflict",
       "resolve-conflict"),
    Op("review_flags", "GET /v1/review_flags", "review_flags", "review-flags"),
    Op("clear_review", "POST /v1/review_flags/{memory_id}/clear", "clear_review",
       "clear-review"),
    Op("add_source_of_truth", PY_OBJECT, PY_OBJECT, PY_OBJECT),
    # Sessions and working memory.
    Op("new_session", "POST /v1/sessions", "new_session", IN_PROCESS),
    Op("session_id", "GET /v1/sessions/current", SESSION_RETURNED, IN_PROCESS),
    Op("context", "GET /v1/context", "context", IN_PROCESS),
    Op("current_context", "GET /v1/context", SAME_AS_CONTEXT, IN_PROCESS),
    Op("working_memory", PY_OBJECT, PY_OBJECT, PY_OBJECT),
    Op("interrupt_consolidation", IN_PROCESS, IN_PROCESS, IN_PROCESS),
    # Procedures, episodes, the graph.
    Op("add_procedure", "POST /v1/procedures", "add_procedure", "add-procedure"),
    Op("find_procedures", "GET /v1/procedures", "find_procedures", "find-procedures"),
    Op("record_procedure_outcome", "POST /v1/procedures/{procedure_id}/outcome",
       "record_procedure_outcome", "record-procedure-outcome"),
    Op("learn_from_trajectory", "POST /v1/trajectories", "learn_from_trajectory",
       "learn-from-trajectory"),
    Op("strategies_for", "GET /v1/strategies", "strategies_for", "strategies-for"),
    Op("has_strategy_for", "GET /v1/strategies/exists", "has_strategy_for",
       "has-strategy-for"),
    Op("episodes_between", "GET /v1/episodes", "episodes_between", "episodes-between"),
    Op("related", "GET /v1/memories/{memory_id}/related", "related", "related"),
    Op("links", "GET /v1/memories/{memory_id}/links", Absent(
        "related answers what an agent asks of the graph (what a memory leads to); its links "
        "one by one are for drawing it (the inspector) and the shell"), "links"),
    Op("link", "POST /v1/links", "link", "link"),
    Op("update_graph_importance", "POST /v1/graph/importance", GARDENER, GARDENER),
    # The learning loop and events.
    Op("decide", "POST /v1/decisions", "decide", "decide"),
    Op("outcome", "POST /v1/decisions/{decision_id}/outcome", "outcome", "outcome"),
    Op("trace", "GET /v1/decisions/{decision_id}", "trace", "trace"),
    Op("traces", "GET /v1/decisions", "traces", "traces"),
    Op("counterfactuals", "GET /v1/decisions/{decision_id}/counterfactuals", "counterfactuals",
       "counterfactuals"),
    Op("memory_influence", "GET /v1/memories/{memory_id}/influence", "memory_influence",
       "memory-influence"),
    Op("salience_history", "GET /v1/memories/{memory_id}/influence", "salience_history",
       "salience-history"),
    Op("events", "GET /v1/events", "events", "events list"),
    Op("replay", "GET /v1/events/replay", "replay", "replay"),
    Op("event_backlog", OPERATOR, OPERATOR, "events publish"),
    Op("acknowledge_events", OPERATOR, OPERATOR, "events publish"),
    Op("publish_events", OPERATOR, OPERATOR, "events publish"),
    Op("extract_patterns", "GET /v1/patterns", "extract_patterns", "extract-patterns"),
    Op("share_patterns", ACROSS_USERS, ACROSS_USERS, "share-patterns"),
    # Banks and opinions (seed 000).
    Op("retain", "POST /v1/retain", "retain", "retain"),
    Op("find_opinion", "GET /v1/opinions/find", "find_opinion", "find-opinion"),
    Op("opinions", "GET /v1/opinions", "opinions", "opinions"),
    Op("opinions_below", "GET /v1/opinions/below", "opinions_below", "opinions-below"),
    Op("get_opinion", "GET /v1/opinions/{opinion_id}", "get_opinion", "get-opinion"),
    Op("opinion_history", "GET /v1/opinions/{opinion_id}/history", "opinion_history",
       "opinion-history"),
    Op("reinforce_opinion", "POST /v1/opinions/{opinion_id}/reinforce", "reinforce_opinion",
       "reinforce-opinion"),
    Op("weaken_opinion", "POST /v1/opinions/{opinion_id}/weaken", "weaken_opinion",
       "weaken-opinion"),
    # The world model and the self-model (seed 000's predictive paradigm).
    Op("observe_transition", "POST /v1/world/transitions", "observe_transition",
       "observe-transition"),
    Op("transitions", "GET /v1/world/transitions", "transitions", "transitions"),
    Op("simulate", "POST /v1/world/simulate", "simulate", "simulate"),
    Op("record_competence", "POST /v1/self/competences", "record_competence",
       "record-competence"),
    Op("competences", "GET /v1/self/competences", "competences", "competences"),
    Op("introspect", "GET /v1/self/introspect", "introspect", "introspect"),
    Op("should_attempt", "POST /v1/self/should-attempt", "should_attempt", "should-attempt"),
    Op("learning_priorities", "GET /v1/self/learning-priorities", "learning_priorities",
       "learning-priorities"),
    # Goals (seed 000's predictive paradigm).
    Op("add_goal", "POST /v1/goals", "add_goal", "add-goal"),
    Op("get_goal", "GET /v1/goals/{goal_id}", "get_goal", "get-goal"),
    Op("goals", "GET /v1/goals", "goals", "goals"),
    Op("get_active_goals", "GET /v1/goals/active", "get_active_goals", "get-active-goals"),
    Op("decompose_goal", "POST /v1/goals/{goal_id}/decompose", "decompose_goal",
       "decompose-goal"),
    Op("update_progress", "POST /v1/goals/{goal_id}/progress", "update_progress",
       "update-progress"),
    Op("resume_goal", "POST /v1/goals/{goal_id}/resume", "resume_goal", "resume-goal"),
    Op("abandon_goal", "POST /v1/goals/{goal_id}/abandon", "abandon_goal", "abandon-goal"),
    Op("anticipate", "GET /v1/goals/{goal_id}/anticipate", "anticipate", "anticipate"),
    Op("pursue_goal", "POST /v1/goals/{goal_id}/pursue", "pursue_goal", "pursue-goal"),
    # Seed 000's response synthesis.
    Op("synthesize", "POST /v1/synthesize", "synthesize", "synthesize"),
    Op("post_interaction", "POST /v1/interactions", "post_interaction", "post-interaction"),
    # Lifecycle.
    Op("sleep", "POST /v1/sleep", "sleep", "sleep"),
    Op("sleep_all", GARDENER, GARDENER, GARDENER),
    Op("forget", "POST /v1/forget", "forget", "forget"),
    Op("run_gardener", OPERATOR, OPERATOR, "gardener run"),
    Op("gardener_schedule", "GET /v1/gardener", Absent(
        "an agent has no use for the maintenance schedule of the whole database; people read "
        "it in the inspector and the shell"), "gardener schedule"),
    Op("sleep_runs", "GET /v1/sleep/runs", Absent(
        "an agent has no use for the log of its scope's maintenance; people read it in the "
        "inspector and the shell"), "sleep-runs"),
    Op("retention", "GET /v1/memories/{memory_id}/retention", "retention", "retention"),
    Op("retention_curve", "GET /v1/memories/{memory_id}/retention", CURVE, CURVE),
    Op("sources", "GET /v1/memories/{memory_id}/sources", "sources", "sources"),
    Op("duplicates", "GET /v1/duplicates", "duplicates", "duplicates"),
    Op("prepare_search", OPERATOR, OPERATOR, OPERATOR),
    Op("prepare_large_scopes", OPERATOR, OPERATOR, OPERATOR),
    Op("stats", "GET /v1/stats", "health", "stats"),
    Op("process_stats", "GET /v1/stats", NOT_FOR_AGENTS, OPERATOR),
    # Export, privacy, erasure, backup.
    Op("export_jsonl", "GET /v1/export", NOT_FOR_AGENTS, "export"),
    Op("export_lines", "GET /v1/export", NOT_FOR_AGENTS, "export"),
    Op("import_jsonl", "POST /v1/import", NOT_FOR_AGENTS, "import"),
    Op("import_lines", "POST /v1/import", NOT_FOR_AGENTS, "import"),
    Op("reveal", "GET /v1/tokens/{token}", NOT_FOR_AGENTS, "reveal"),
    Op("detokenise", "POST /v1/reveal", NOT_FOR_AGENTS, "detokenise"),
    Op("forget_person", "POST /v1/erase", "forget_person", "forget-person"),
    Op("forget_scope", "POST /v1/erase/scope", ERASE_SCOPE, "forget-scope"),
    Op("backup", "GET /v1/backup", OPERATOR, "backup"),
    Op(FUNCTION, OPERATOR, OPERATOR, "restore"),
    Op(STORE_COPY, OPERATOR, OPERATOR, "migrate"),
    # API keys and scopes.
    Op("create_key", KEYS, KEYS, "keys create"),
    Op("list_keys", KEYS, KEYS, "keys list"),
    Op("revoke_key", KEYS, KEYS, "keys revoke"),
    Op("count_keys", KEYS, KEYS, Absent("ucma keys list shows them")),
    Op("authenticate", Absent("every request with a key does it"), KEYS, KEYS),
    Op("scopes", "GET /v1/scopes", Absent(
        "an agent works in the one scope its key or its session names; the list of scopes is "
        "for the people and tools that look at the memory (the inspector page)"), OPERATOR),
    # The service and the command line themselves.
    Op("close", Absent("the process's end closes it"), SERVICE_ONLY, SERVICE_ONLY),
    Op(SERVICE_ONLY, "GET /v1/health", "health", Absent("ucma stats answers when it works")),
    Op(PROCESS_COMMAND, SERVICE_ONLY, SERVICE_ONLY, "serve"),
    Op(PROCESS_COMMAND, SERVICE_ONLY, SERVICE_ONLY, "worker"),
    Op(PROCESS_COMMAND, SERVICE_ONLY, SERVICE_ONLY, "mcp"),
    Op(PROCESS_COMMAND, SERVICE_ONLY, SERVICE_ONLY, "demo"),
    Op(PROCESS_COMMAND, SERVICE_ONLY, SERVICE_ONLY, "bench"),
]  # fmt: skip


def _named(column: str) -> set[str]:
    found: set[str] = set()
    for op in OPERATIONS:
        value = getattr(op, column)
        if isinstance(value, tuple):
            found.update(value)
        elif isinstance(value, str):
            found.add(value)
    return found


def python_operations() -> set[str]:
    return {
        name
        for name in dir(Memory)
        if not name.startswith("_")
        and callable(getattr(Memory, name))
        and not isinstance(inspect.getattr_static(Memory, name), property)
    }


def rest_operations(tmp_path: Path) -> set[str]:
    app = create_app(home=tmp_path, require_keys=False, mcp=False)
    return {
        f"{method.upper()} {path}"
        for path, methods in app.openapi()["paths"].items()
        for method in methods
    }


def cli_operations() -> set[str]:
    found: set[str] = set()

    def walk(group: object, prefix: str) -> None:
        for name, command in group.commands.items():  # type: ignore[attr-defined]
            if hasattr(command, "commands"):
                walk(command, f"{prefix}{name} ")
            else:
                found.add(prefix + name)

    walk(typer.main.get_command(cli_app), "")
    return found


async def mcp_operations(tmp_path: Path, embedder: LocalEmbedder) -> set[str]:
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        return {tool.name for tool in (await client.list_tools()).tools}


def test_every_python_operation_has_a_row() -> None:
    actual = python_operations()
    assert actual - _named("python") == set(), "public Memory methods without a row"
    assert _named("python") - actual == set(), "rows naming methods Memory does not have"


def test_every_route_has_a_row(tmp_path: Path) -> None:
    actual = rest_operations(tmp_path)
    assert actual - _named("rest") == set(), "routes without a row"
    assert _named("rest") - actual == set(), "rows naming routes the app does not have"


@pytest.mark.anyio
async def test_every_mcp_tool_has_a_row(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    actual = await mcp_operations(tmp_path, local_embedder)
    assert actual - _named("mcp") == set(), "tools without a row"
    assert _named("mcp") - actual == set(), "rows naming tools the server does not list"


def test_every_cli_command_has_a_row() -> None:
    actual = cli_operations()
    assert actual - _named("cli") == set(), "commands without a row"
    assert _named("cli") - actual == set(), "rows naming commands the CLI does not have"


def test_names_agree_across_interfaces() -> None:
    """Where an operation has a Python name and an MCP tool or CLI command, they are the
    same word (dashes in the CLI), except the few documented here."""
    renamed = {
        ("facts_about", "facts"),  # short names for agents and the shell
        ("traverse", "facts"),  # ucma facts --hops
        ("stats", "health"),
        ("assert_fact_detailed", "assert_fact"),
        ("assert_fact_detailed", "assert-fact"),  # both forms print what the write changed
        ("export_jsonl", "export"),  # the CLI writes a file; one command for both forms
        ("export_lines", "export"),
        ("import_jsonl", "import"),
        ("import_lines", "import"),
    }
    for op in OPERATIONS:
        if not isinstance(op.python, str):
            continue
        for other in (op.mcp, op.cli):
            if isinstance(other, str) and " " not in other:
                assert other.replace("-", "_") == op.python or (op.python, other) in renamed, (
                    op.python,
                    other,
                )


def test_every_exception_says_why() -> None:
    for op in OPERATIONS:
        for value in (op.python, op.rest, op.mcp, op.cli):
            if isinstance(value, Absent):
                assert len(value.reason) > 15, op
        assert any(not isinstance(v, Absent) for v in (op.python, op.rest, op.mcp, op.cli)), op


# The store-step overrides of seed 003 R1/R2 (content type, temporal level, starting
# salience, bank): every interface of observe and add takes all of them.
STORE_STEP = {"content_type", "temporal_level", "salience", "bank"}


def _rest_body_fields(app_schema: dict, route: str) -> set[str]:
    method, path = route.split(" ", 1)
    body = app_schema["paths"][path][method.lower()]["requestBody"]["content"]
    reference = body["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    return set(app_schema["components"]["schemas"][reference]["properties"])


@pytest.mark.anyio
async def test_store_step_overrides_reach_every_interface(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    schema = create_app(home=tmp_path, require_keys=False, mcp=False).openapi()
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        listed = (await client.list_tools()).tools
    tools = {t.name: set(t.input_schema["properties"]) for t in listed}
    commands = typer.main.get_command(cli_app).commands  # type: ignore[attr-defined]
    checked = 0
    for op in OPERATIONS:
        if op.python not in ("observe", "add"):
            continue
        assert set(inspect.signature(getattr(Memory, op.python)).parameters) >= STORE_STEP, op
        assert isinstance(op.rest, str) and _rest_body_fields(schema, op.rest) >= STORE_STEP, op
        if isinstance(op.mcp, str):
            assert tools[op.mcp] >= STORE_STEP, op
        assert isinstance(op.cli, str)
        assert {p.name for p in commands[op.cli].params} >= STORE_STEP, op
        checked += 1
    assert checked == 2
