"""Two tenants, one database: everything tenant B can try against tenant A.

The real service (REST and MCP over streamable HTTP, on a loopback uvicorn server, API
keys required) holds keys for users A and B on one SQLite file. A writes a realistic
store through the public API; then B attacks every operation of the OpenAPI schema and
every MCP tool the server lists:

- **probes**: B sends A's ids (returned to A, or computed the way the engine computes
  them: ``fact_id_for``, ``foreign_id``) wherever an operation takes an id, and the same
  request with a twin id that exists nowhere (same shape, sealed to A's scope or random).
  The two answers must be identical up to the echoed id: no existence oracle.
- **scope probes**: B names A's user in every operation that takes a ``user_id``, and a
  user that does not exist; the two answers must be identical.
- **searches**: B asks every read operation for A's content.
- **leaks**: no B response holds A's content, ids or tokens (an id B sent may be echoed).
- **no change**: A's export before and after B's attacks is the same.

An operation or tool the suite does not know how to attack fails the suite, unless it is
in ``EXEMPT`` with a reason: a new route is covered or consciously left out.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from cryptography.fernet import Fernet
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ucma.engine import AsyncMemory
from ucma.memory_ids import foreign_id, new_memory_id
from ucma.server import create_app
from ucma.sync import Memory
from ucma.types import Scope, fact_id_for

pytestmark = pytest.mark.integration

LiveServer = Callable[[object], AbstractContextManager[str]]
Operation = tuple[str, str]

A_SCOPE = Scope(user_id="alice")
#: Words that appear only in A's records: finding one in a B response is a leak.
CANARIES = ("Zephyrine", "Quokkaville", "Marrowfield", "Tindlebrook", "Oxalis-7")
A_EMAIL = "zephyrine.okafor@quokkaville.example"
A_PHONE = "+44 20 7946 0321"
A_TAGS = ["quokkaville-deploy"]
NOBODY = "nobody-at-all"
#: B's agent for requests that store A's words or labels in B's own records, so
#: that B's other answers are not full of its own echoes.
MIRROR = "mirror"
#: A new agent of B for each request (``{N}``): writes that must not merge into the last.
FRESH = "mirror-{N}"

#: Operations B does not attack, and why.
EXEMPT: dict[Operation, str] = {
    ("GET", "/v1/health"): "no scope and no ids: the same constant answer for every caller "
    "(its body is still scanned for leaks below)",
}


# --------------------------------------------------------------------------- the store


@dataclass
class Tenant:
    """What A's responses returned: ids by kind, and every secret B must never see."""

    ids: dict[str, list[str]] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)

    def add(self, kind: str, value: str) -> str:
        self.ids.setdefault(kind, []).append(value)
        self.secrets.add(value)
        return value

    def first(self, kind: str) -> str:
        return self.ids[kind][0]


@dataclass
class World:
    url: str
    a: dict[str, str]
    b: dict[str, str]
    a_store: Tenant
    b_ids: dict[str, Any]
    a_export: list[dict[str, Any]]


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 300, (response.request.url, response.text)
    return response.json()


def _export(client: httpx.Client) -> list[dict[str, Any]]:
    response = client.get("/v1/export")
    assert response.status_code == 200, response.text
    lines = [json.loads(line) for line in response.text.splitlines() if line.strip()]
    return sorted(lines, key=lambda line: json.dumps(line, sort_keys=True))


def _write_a(client: httpx.Client) -> Tenant:
    """A realistic store written through the public API, every record kind."""
    t = Tenant()
    session = _ok(client.post("/v1/sessions"))
    t.add("session", session["session_id"])
    observed = _ok(
        client.post(
            "/v1/observe",
            json={
                "content": "Zephyrine from Quokkaville asked to move the Marrowfield "
                f"deploy to Thursday; her email is {A_EMAIL}.",
                "tags": A_TAGS,
                "session_id": session["session_id"],
                "metadata": {"project": "Marrowfield"},
            },
        )
    )
    t.add("episode", observed["id"])
    batch = _ok(
        client.post(
            "/v1/observe/batch",
            json={
                "items": [
                    {
                        "content": "The Marrowfield staging database moved to port 5433 "
                        "after the Tindlebrook upgrade.",
                        "tags": A_TAGS,
                    },
                    {
                        "content": f"Zephyrine's phone number is {A_PHONE}, call before noon "
                        "about Oxalis-7.",
                        "tags": A_TAGS,
                    },
                ]
            },
        )
    )
    for item in batch["results"]:
        t.add("episode", item["id"])
    added = _ok(
        client.post(
            "/v1/memories",
            json={
                "messages": [
                    {
                        "role": "user",
                        "content": "Remember that Quokkaville invoices go out "
                        "on the first Monday of the month.",
                    },
                    {
                        "role": "assistant",
                        "content": "Noted: Quokkaville invoices, first Monday of each month.",
                    },
                ],
                "run_id": "run-quokkaville-1",
                "metadata": {"topic": "Marrowfield billing"},
            },
        )
    )
    for item in added["results"]:
        t.add("episode", item["id"])
    t.ids["run"] = ["run-quokkaville-1"]  # a caller's label, not a secret

    fact = {"subject": "Zephyrine", "predicate": "delivery_pref"}
    first = _ok(
        client.post("/v1/facts", json={**fact, "object": "Thursday", "metadata": {"source": "crm"}})
    )
    second = _ok(
        client.post(
            "/v1/facts", json={**fact, "object": "Friday", "metadata": {"source": "support_call"}}
        )
    )
    t.add("fact", first["fact"]["id"])
    t.add("fact", second["fact"]["id"])
    for conflict in second["conflicts_detected"]:
        t.add("conflict", conflict["id"])
    works = _ok(
        client.post(
            "/v1/facts",
            json={
                "subject": "Zephyrine",
                "predicate": "works_at",
                "object": "Tindlebrook",
                "source_episode_ids": [observed["id"]],
            },
        )
    )
    t.add("fact", works["fact"]["id"])
    assert works["fact"]["id"] == fact_id_for(A_SCOPE, "Zephyrine", "works_at", "Tindlebrook")

    recalled = _ok(client.post("/v1/recall", json={"query": "When is the Marrowfield deploy?"}))
    t.add("retrieval", recalled["retrieval_id"])
    used = [hit["id"] for hit in recalled["results"][:2]]
    decided = _ok(
        client.post(
            "/v1/decisions",
            json={
                "memory_ids": used,
                "summary": "Moved the Marrowfield deploy to Thursday",
                "retrieval_id": recalled["retrieval_id"],
            },
        )
    )
    t.add("decision", decided["id"])
    _ok(
        client.post(
            f"/v1/decisions/{decided['id']}/outcome",
            json={"quality": 0.8, "signal": "user_accepted", "feedback": "Zephyrine agreed"},
        )
    )
    open_decision = _ok(
        client.post(
            "/v1/decisions",
            json={"memory_ids": used[:1], "summary": "Proposed Oxalis-7 rollout at noon"},
        )
    )
    t.add("decision", open_decision["id"])

    procedure = _ok(
        client.post(
            "/v1/procedures",
            json={
                "name": "Deploy Marrowfield",
                "description": "How the Quokkaville team deploys Marrowfield safely.",
                "steps": [
                    {"description": "Freeze Tindlebrook writes"},
                    {"description": "Run the Oxalis-7 migration"},
                ],
                "trigger_tags": A_TAGS,
            },
        )
    )
    t.add("procedure", procedure["id"])
    _ok(client.post(f"/v1/procedures/{procedure['id']}/outcome", json={"success": True}))
    for success, reason in ((True, None), (False, "'Run the Oxalis-7 migration' failed")):
        learned = _ok(
            client.post(
                "/v1/trajectories",
                json={
                    "task": "Deploy Marrowfield for the Quokkaville team",
                    "steps": ["Freeze Tindlebrook writes", "Run the Oxalis-7 migration"],
                    "success": success,
                    "failure_reason": reason,
                    "domain": "quokkaville-deploy",
                    "context": [works["fact"]["id"]],
                },
            )
        )
        t.add("procedure", learned["items"][0]["id"])
    _ok(
        client.post(
            f"/v1/procedures/{learned['items'][0]['id']}/outcome",
            json={
                "success": False,
                "task": "the Marrowfield deploy of Zephyrine",
                "failure_reason": "Tindlebrook was still writing",
                "discoveries": [
                    {"subject": "Marrowfield", "predicate": "needs", "object": "Oxalis-7 freeze"}
                ],
            },
        )
    )
    learning = _ok(
        client.post(
            "/v1/learn",
            json={
                "insight": "Marrowfield deploys fail when Tindlebrook writes are not frozen "
                "first; freeze them before the Oxalis-7 migration.",
                "evidence_ids": [observed["id"]],
                "applicability": A_TAGS,
            },
        )
    )
    t.add("learning", learning["id"])
    _ok(client.post(f"/v1/learnings/{learning['id']}/validate", json={"success": True}))
    _ok(
        client.post(
            "/v1/links",
            json={
                "source_id": observed["id"],
                "target_id": batch["results"][0]["id"],
                "edge_type": "caused",
            },
        )
    )

    retained = _ok(
        client.post(
            "/v1/retain",
            json={
                "text": "Zephyrine prefers the Marrowfield dashboard in dark mode.",
                "bank": "opinion",
                "topic": "Zephyrine's Marrowfield dashboard theme",
            },
        )
    )
    t.add("episode", retained["id"])
    held = _ok(
        client.get("/v1/opinions/find", params={"topic": "Zephyrine's Marrowfield dashboard theme"})
    )["opinion"]
    t.add("opinion", held["id"])
    _ok(
        client.post(
            f"/v1/opinions/{held['id']}/weaken",
            json={"evidence": "Zephyrine switched the Quokkaville dashboard to light mode.",
                  "weight": 1.0, "stance": "light mode"},
        )
    )  # fmt: skip
    for opinion in _ok(client.get("/v1/opinions", params={"include_replaced": "true"}))["items"]:
        if opinion["id"] not in t.ids["opinion"]:
            t.add("opinion", opinion["id"])

    # The world model and the self-model.
    for outcome in ("Tindlebrook freeze held", "Tindlebrook freeze held", "Oxalis-7 lock"):
        transition = _ok(
            client.post(
                "/v1/world/transitions",
                json={
                    "action": "deploy Marrowfield",
                    "outcome": outcome,
                    "context": {"site": "Quokkaville"},
                },
            )
        )
        if transition["id"] not in t.ids.get("transition", []):
            t.add("transition", transition["id"])
    competence = _ok(
        client.post(
            "/v1/self/competences",
            json={
                "capability": "Marrowfield deploys",
                "success": False,
                "predicted": 0.8,
                "failure_reason": "Oxalis-7 migration locks",
            },
        )
    )
    t.add("competence", competence["id"])
    # A goal with subgoals, one suspended by what A observed.
    goal = _ok(
        client.post(
            "/v1/goals",
            json={
                "description": "Migrate the Marrowfield service and retire the Tindlebrook "
                "backups for the Quokkaville team",
                "priority": 0.9,
            },
        )
    )
    t.add("goal", goal["id"])
    for subgoal in _ok(client.post(f"/v1/goals/{goal['id']}/decompose", json={}))["items"]:
        t.add("goal", subgoal["id"])
    _ok(client.post(f"/v1/goals/{t.ids['goal'][1]}/progress", json={"progress": 0.5}))
    _ok(client.post("/v1/observe", json={"content": "The Oxalis-7 rollout got cancelled."}))
    t.add(
        "goal",
        _ok(client.post("/v1/goals", json={"description": "Finish the Oxalis-7 rollout"}))["id"],
    )

    # An import: a record with an id of its own file, re-identified into A's scope.
    header, record = _memory_line(client)
    original = "ep_" + "5" * 32
    content = "Imported note: Tindlebrook backups run at 02:00 for Quokkaville."
    imported = {**record, "record": {**record["record"], "id": original, "content": content}}
    body = "\n".join(json.dumps(line) for line in (header, imported)) + "\n"
    headers = {"content-type": "application/x-ndjson"}
    _ok(client.post("/v1/import", content=body, headers=headers))
    t.add("imported", foreign_id(original, A_SCOPE))

    # Every id and token in A's own export is A's secret too.
    for line in _export(client):
        text = json.dumps(line)
        for token in re.findall(r"\[[a-z_]+_[0-9a-f]{8,64}\]", text):
            if token not in t.secrets:
                t.add("token", token)
        if isinstance(line.get("id"), str):
            t.secrets.add(line["id"])
    assert "token" in t.ids, "the content guard tokenised none of A's personal data"
    t.secrets.update(CANARIES)
    t.secrets.update((A_EMAIL, A_PHONE, "zephyrine.okafor"))
    return t


def _memory_line(client: httpx.Client) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and an episode's line of the caller's export."""
    lines = [json.loads(line) for line in client.get("/v1/export").text.splitlines()]
    episode = next(
        line
        for line in lines
        if line["type"] == "memory" and line["record"]["id"].startswith("ep_")
    )
    return lines[0], episode


def _write_b(client: httpx.Client) -> dict[str, Any]:
    """A little of B's own, to link, decide and import with (and its export lines)."""
    observed = _ok(
        client.post(
            "/v1/observe",
            json={"content": "Bob prefers tea over coffee in the afternoon meetings."},
        )
    )
    decided = _ok(
        client.post("/v1/decisions", json={"memory_ids": [observed["id"]], "summary": "Tea"})
    )
    fact = {"subject": "Bob", "predicate": "delivery_pref"}
    _ok(client.post("/v1/facts", json={**fact, "object": "Monday", "metadata": {"source": "crm"}}))
    conflicted = _ok(
        client.post(
            "/v1/facts", json={**fact, "object": "Tuesday", "metadata": {"source": "support_call"}}
        )
    )
    assert conflicted["conflicts_detected"], "B's store needs a conflict to import"
    _ok(client.post("/v1/goals", json={"description": "Brew green tea for the Friday call"}))
    lines = [json.loads(line) for line in client.get("/v1/export").text.splitlines()]
    by_type = {line["type"]: line for line in reversed(lines)}
    episode = next(
        line
        for line in lines
        if line["type"] == "memory" and line["record"]["id"] == observed["id"]
    )
    return {
        "episode": observed["id"],
        "decision": decided["id"],
        "lines": {**by_type, "memory": episode},
    }


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, live_server: LiveServer) -> Iterator[World]:
    home = tmp_path_factory.mktemp("tenants")
    with Memory(home / "ucma.db") as admin:
        _, a_token = admin.create_key("alice")
        _, b_token = admin.create_key("bob")
    app = create_app(home=home, require_keys=True, mcp=True, maintenance=False)
    with live_server(app) as url:
        a = {"authorization": f"Bearer {a_token}"}
        b = {"authorization": f"Bearer {b_token}"}
        with httpx.Client(base_url=url, headers=a, timeout=120) as client:
            store = _write_a(client)
            before = _export(client)
        with httpx.Client(base_url=url, headers=b, timeout=120) as client:
            b_ids = _write_b(client)
        yield World(url, a, b, store, b_ids, before)


# --------------------------------------------------------------------------- probes


@dataclass(frozen=True)
class Probe:
    """One request of B, with ``{X}`` standing for the id under test."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    body: Any = None
    content: str | None = None

    def fill(self, value: str) -> dict[str, Any]:
        def put(item: Any) -> Any:
            if isinstance(item, str):
                return item.replace("{X}", value)
            if isinstance(item, list):
                return [put(i) for i in item]
            if isinstance(item, dict):
                return {k: put(v) for k, v in item.items()}
            return item

        request: dict[str, Any] = {"method": self.method, "url": put(self.path)}
        if self.params is not None:
            request["params"] = put(self.params)
        if self.body is not None:
            request["json"] = put(self.body)
        if self.content is not None:
            request["content"] = put(self.content)
            request["headers"] = {"content-type": "application/x-ndjson"}
        return request


@functools.cache
def twins(real: str) -> tuple[str, ...]:
    """Ids of the same shape as ``real`` that exist nowhere: sealed to A's scope (the
    way the engine makes ids), computed (facts) and random. The same twins all run
    long, so B's requests with an id and with its twins have the same history."""
    return tuple(_twins(real))


def _twins(real: str) -> list[str]:
    prefix, _, body = real.partition("_")
    out = []
    if len(body) == 48 and re.fullmatch(r"[0-9a-f]+", body):
        out.append(new_memory_id(prefix, A_SCOPE))
    if real.startswith("["):  # a token: [kind_hex]
        kind, _, digest = real[1:-1].rpartition("_")
        return [f"[{kind}_{secrets.token_hex(len(digest) // 2)}]"]
    if prefix == "fact":  # computed as the engine does, for a triple A never stated
        out.append(fact_id_for(A_SCOPE, "Zephyrine", "delivery_pref", secrets.token_hex(4)))
    if re.fullmatch(r"[0-9a-f]+", body):
        out.append(f"{prefix}_{secrets.token_hex(len(body) // 2)}")
    else:
        out.append(f"{prefix}_{secrets.token_hex(8)}")
    return out


MEMORY_KINDS = ("episode", "fact", "procedure", "learning", "imported")
ID_PROBES: dict[Operation, list[tuple[tuple[str, ...], Probe]]] = {}


def probes(method: str, path: str, kinds: tuple[str, ...], *variants: Probe) -> None:
    ID_PROBES.setdefault((method, path), []).extend((kinds, v) for v in variants)


probes("GET", "/v1/memories/{memory_id}", MEMORY_KINDS, Probe("GET", "/v1/memories/{X}"))
probes("DELETE", "/v1/memories/{memory_id}", MEMORY_KINDS, Probe("DELETE", "/v1/memories/{X}"))
probes(
    "PUT",
    "/v1/memories/{memory_id}",
    MEMORY_KINDS,
    Probe("PUT", "/v1/memories/{X}", body={"text": "Bob rewrote this memory completely."}),
)
for action in ("archive", "unarchive"):
    probes(
        "POST",
        f"/v1/memories/{{memory_id}}/{action}",
        MEMORY_KINDS,
        Probe("POST", f"/v1/memories/{{X}}/{action}"),
        Probe("POST", f"/v1/memories/{{X}}/{action}", body={"agent_id": "default"}),
    )
probes(
    "GET",
    "/v1/memories/{memory_id}/history",
    MEMORY_KINDS,
    Probe("GET", "/v1/memories/{X}/history"),
)
probes(
    "GET",
    "/v1/memories/{memory_id}/influence",
    MEMORY_KINDS,
    Probe("GET", "/v1/memories/{X}/influence"),
)
probes(
    "GET",
    "/v1/memories/{memory_id}/related",
    MEMORY_KINDS,
    Probe("GET", "/v1/memories/{X}/related"),
)
probes(
    "GET",
    "/v1/memories/{memory_id}/links",
    MEMORY_KINDS,
    Probe("GET", "/v1/memories/{X}/links"),
)
probes(
    "GET",
    "/v1/memories/{memory_id}/retention",
    MEMORY_KINDS,
    Probe("GET", "/v1/memories/{X}/retention"),
)
probes(
    "GET",
    "/v1/memories/{memory_id}/sources",
    MEMORY_KINDS,
    Probe("GET", "/v1/memories/{X}/sources"),
)
probes(
    "POST",
    "/v1/review_flags/{memory_id}/clear",
    MEMORY_KINDS,
    Probe("POST", "/v1/review_flags/{X}/clear"),
)
probes(
    "POST",
    "/v1/conflicts/{conflict_id}/resolve",
    ("conflict",),
    Probe("POST", "/v1/conflicts/{X}/resolve", body={"chosen_value": "Friday"}),
    Probe("POST", "/v1/conflicts/{X}/resolve", body={"chosen_value": "Monday"}),
)
probes(
    "POST",
    "/v1/decisions/{decision_id}/outcome",
    ("decision",),
    Probe("POST", "/v1/decisions/{X}/outcome", body={"quality": -1, "signal": "task_failed"}),
)
probes("GET", "/v1/decisions/{decision_id}", ("decision",), Probe("GET", "/v1/decisions/{X}"))
probes(
    "GET",
    "/v1/decisions/{decision_id}/counterfactuals",
    ("decision",),
    Probe("GET", "/v1/decisions/{X}/counterfactuals"),
)
probes(
    "POST",
    "/v1/procedures/{procedure_id}/outcome",
    ("procedure",),
    Probe("POST", "/v1/procedures/{X}/outcome", body={"success": False}),
)
probes(
    "POST",
    "/v1/learnings/{learning_id}/validate",
    ("learning",),
    Probe("POST", "/v1/learnings/{X}/validate", body={"success": False}),
)
probes("GET", "/v1/goals/{goal_id}", ("goal",), Probe("GET", "/v1/goals/{X}"))
probes(
    "POST",
    "/v1/goals/{goal_id}/decompose",
    ("goal",),
    Probe("POST", "/v1/goals/{X}/decompose", body={"steps": ["Boil water", "Steep tea"]}),
    Probe("POST", "/v1/goals/{X}/decompose"),
)
probes(
    "POST",
    "/v1/goals/{goal_id}/progress",
    ("goal",),
    Probe("POST", "/v1/goals/{X}/progress", body={"progress": 1.0}),
    Probe("POST", "/v1/goals/{X}/progress", body={"delta": -1.0}),
)
probes("POST", "/v1/goals/{goal_id}/resume", ("goal",), Probe("POST", "/v1/goals/{X}/resume"))
probes("POST", "/v1/goals/{goal_id}/abandon", ("goal",), Probe("POST", "/v1/goals/{X}/abandon"))
probes(
    "GET",
    "/v1/goals/{goal_id}/anticipate",
    ("goal",),
    Probe("GET", "/v1/goals/{X}/anticipate"),
)
probes("POST", "/v1/goals/{goal_id}/pursue", ("goal",), Probe("POST", "/v1/goals/{X}/pursue"))
probes(
    "POST",
    "/v1/goals",
    ("goal",),
    Probe(
        "POST",
        "/v1/goals",
        body={"description": "Bob's tea subgoal", "parent_id": "{X}", "agent_id": FRESH},
    ),
)
probes("GET", "/v1/opinions/{opinion_id}", ("opinion",), Probe("GET", "/v1/opinions/{X}"))
probes(
    "GET",
    "/v1/opinions/{opinion_id}/history",
    ("opinion",),
    Probe("GET", "/v1/opinions/{X}/history"),
)
probes(
    "POST",
    "/v1/opinions/{opinion_id}/reinforce",
    ("opinion",),
    Probe("POST", "/v1/opinions/{X}/reinforce", body={"evidence": "Bob saw it again."}),
)
probes(
    "POST",
    "/v1/opinions/{opinion_id}/weaken",
    ("opinion",),
    Probe(
        "POST",
        "/v1/opinions/{X}/weaken",
        body={"evidence": "Bob disagrees.", "weight": 1.0, "stance": "tea"},
    ),
)
probes("GET", "/v1/tokens/{token}", ("token",), Probe("GET", "/v1/tokens/{X}"))
probes(
    "POST",
    "/v1/trajectories",
    ("fact",),
    Probe(
        "POST",
        "/v1/trajectories",
        body={
            "task": "Bob brews tea",
            "steps": ["boil water"],
            "success": True,
            "context": ["{X}"],
        },
    ),
)
probes(
    "POST",
    "/v1/reveal",
    ("token",),
    Probe("POST", "/v1/reveal", body={"text": "Bob asks what {X} stands for."}),
)
probes(
    "POST",
    "/v1/decisions",
    MEMORY_KINDS,
    Probe("POST", "/v1/decisions", body={"memory_ids": ["{X}"], "summary": "Bob decided"}),
    Probe(
        "POST", "/v1/decisions", body={"memory_ids": ["{B}", "{X}"], "summary": "Bob decided twice"}
    ),
)
probes(
    "POST",
    "/v1/decisions",
    ("retrieval",),
    Probe(
        "POST",
        "/v1/decisions",
        body={"memory_ids": ["{B}"], "summary": "Bob used a recall", "retrieval_id": "{X}"},
    ),
)
probes(
    "POST",
    "/v1/links",
    MEMORY_KINDS,
    Probe(
        "POST", "/v1/links", body={"source_id": "{B}", "target_id": "{X}", "edge_type": "caused"}
    ),
    Probe(
        "POST", "/v1/links", body={"source_id": "{X}", "target_id": "{B}", "edge_type": "caused"}
    ),
)
probes(
    "POST",
    "/v1/learn",
    MEMORY_KINDS,
    Probe(
        "POST",
        "/v1/learn",
        body={"insight": "Bob learned that tea helps meetings.", "evidence_ids": ["{X}"]},
    ),
)
probes(
    "POST",
    "/v1/facts",
    MEMORY_KINDS,
    Probe(
        "POST",
        "/v1/facts",
        body={
            "subject": "Bob",
            "predicate": "drinks",
            "object": "tea",
            "source_episode_ids": ["{X}"],
        },
    ),
)
probes(
    "POST",
    "/v1/observe",
    ("session",),
    Probe(
        "POST",
        "/v1/observe",
        body={
            "content": "Bob joined the Friday call at 3pm sharp.",
            "session_id": "{X}",
            "agent_id": FRESH,
        },
    ),
)
probes(
    "GET",
    "/v1/memories",
    ("run",),
    Probe("GET", "/v1/memories", params={"run_id": "{X}", "agent_id": MIRROR}),
)
probes(
    "POST",
    "/v1/memories/search",
    ("run",),
    Probe(
        "POST",
        "/v1/memories/search",
        body={"query": "invoices", "run_id": "{X}", "agent_id": MIRROR},
    ),
)
probes(
    "DELETE",
    "/v1/memories",
    ("run",),
    Probe(
        "DELETE", "/v1/memories", params={"confirm": "true", "run_id": "{X}", "agent_id": MIRROR}
    ),
)
probes(
    "POST",
    "/v1/memories",
    ("run",),
    Probe(
        "POST",
        "/v1/memories",
        body={"messages": "Bob's run note about green tea.", "run_id": "{X}", "agent_id": FRESH},
    ),
)
probes(
    "POST",
    "/v1/interactions",
    ("procedure",),
    Probe(
        "POST",
        "/v1/interactions",
        body={
            "query": "Bob brews tea",
            "response": "Brewed.",
            "success": False,
            "strategy_id": "{X}",
            "agent_id": FRESH,
        },
    ),
)
probes(
    "POST",
    "/v1/interactions",
    ("goal",),
    Probe(
        "POST",
        "/v1/interactions",
        body={
            "query": "Bob brews tea",
            "response": "Brewed.",
            "success": True,
            "goal_id": "{X}",
            "progress_delta": 1.0,
            "agent_id": FRESH,
        },
    ),
)
for form, kinds in (
    ("memory", MEMORY_KINDS),
    ("edge", MEMORY_KINDS),
    ("history", MEMORY_KINDS),
    ("decision_memory", MEMORY_KINDS),
    ("decision", ("decision",)),
    ("conflict", ("conflict",)),
    ("opinion", ("opinion",)),
    ("goal", ("goal",)),
):
    probes("POST", "/v1/import", kinds, Probe("POST", "/v1/import", content=f"import:{form}"))


#: Read operations B asks for A's content (leaks only; answers are B's own).
SEARCHES: list[Probe] = [
    Probe("GET", "/v1/health"),
    Probe("GET", "/v1/stats"),
    Probe("GET", "/v1/scopes"),
    Probe("GET", "/v1/gardener"),
    Probe("GET", "/v1/scopes", params={"limit": 1000, "offset": 0}),
    Probe(
        "POST",
        "/v1/observe/batch",
        {},
        {"items": [{"content": "Bob reviewed the Friday agenda with the team."}]},
    ),
    Probe("POST", "/v1/remember", body={"query": "Zephyrine Marrowfield deploy Thursday"}),
    Probe("POST", "/v1/remember", body={"query": "deploy", "entity": "Zephyrine", "tags": A_TAGS}),
    Probe(
        "POST",
        "/v1/recall",
        body={"query": "What is Zephyrine's email and phone?", "explain": True},
    ),
    Probe("POST", "/v1/memories/search", body={"query": "Quokkaville invoices"}),
    Probe(
        "POST",
        "/v1/memories/search",
        body={"query": "deploy", "filters": {"project": "Marrowfield"}},
    ),
    Probe(
        "POST",
        "/v1/chat",
        body={"message": "Which day does Zephyrine prefer?", "entity": "Zephyrine"},
    ),
    Probe("GET", "/v1/facts", params={"entity": "Zephyrine"}),
    Probe("GET", "/v1/facts", params={"entity": "Zephyrine", "include_history": "true"}),
    Probe(
        "GET", "/v1/facts/history", params={"subject": "Zephyrine", "predicate": "delivery_pref"}
    ),
    Probe("GET", "/v1/facts/traverse", params={"entity": "Zephyrine", "max_hops": 3}),
    Probe("GET", "/v1/conflicts", params={"subject": "Zephyrine"}),
    Probe("GET", "/v1/review_flags", params={"include_cleared": "true"}),
    Probe("GET", "/v1/decisions"),
    Probe("GET", "/v1/decisions", params={"observed": "true"}),
    Probe("GET", "/v1/events", params={"after_seq": 0, "limit": 500}),
    Probe("GET", "/v1/events/replay"),
    Probe("GET", "/v1/duplicates", params={"limit": 1000}),
    Probe("GET", "/v1/sleep/runs", params={"limit": 1000}),
    Probe("GET", "/v1/patterns"),
    Probe("GET", "/v1/procedures", params={"tags": A_TAGS}),
    Probe("GET", "/v1/learnings", params={"tags": A_TAGS}),
    Probe("GET", "/v1/strategies", params={"task": "Deploy Marrowfield", "limit": 100}),
    Probe(
        "GET",
        "/v1/strategies",
        params={
            "task": "Deploy Marrowfield",
            "domain": "quokkaville-deploy",
            "contradicted": "flag",
        },
    ),
    Probe("GET", "/v1/strategies/exists", params={"task": "Deploy Marrowfield"}),
    Probe(
        "POST",
        "/v1/trajectories",
        body={
            "task": "Deploy Marrowfield for the Quokkaville team",
            "steps": ["Freeze Tindlebrook writes"],
            "success": True,
            "domain": "quokkaville-deploy",
            "agent_id": MIRROR,
        },
    ),
    Probe("GET", "/v1/opinions", params={"include_replaced": "true", "limit": 1000}),
    Probe("GET", "/v1/opinions/find", params={"topic": "Zephyrine's Marrowfield dashboard"}),
    Probe("GET", "/v1/opinions/below", params={"confidence": 1.0}),
    Probe("GET", "/v1/goals", params={"limit": 1000}),
    Probe("GET", "/v1/goals", params={"status": "suspended"}),
    Probe("GET", "/v1/goals/active"),
    Probe(
        "POST",
        "/v1/retain",
        body={
            "text": "Zephyrine prefers the Marrowfield dashboard in dark mode.",
            "bank": "opinion",
            "topic": "Zephyrine's Marrowfield dashboard theme",
            "agent_id": MIRROR,
        },
    ),
    Probe("POST", "/v1/remember", body={"query": "Zephyrine dashboard", "banks": ["opinion"]}),
    Probe("GET", "/v1/world/transitions", params={"limit": 1000}),
    Probe("GET", "/v1/world/transitions", params={"action": "deploy Marrowfield"}),
    Probe(
        "POST",
        "/v1/world/simulate",
        body={"action": "deploy Marrowfield", "context": {"site": "Quokkaville"}},
    ),
    Probe(
        "POST",
        "/v1/world/transitions",
        body={
            "action": "deploy Marrowfield",
            "outcome": "Oxalis-7 lock",
            "context": {"site": "Quokkaville"},
            "agent_id": MIRROR,
        },
    ),
    Probe("GET", "/v1/self/competences", params={"limit": 1000}),
    Probe(
        "POST",
        "/v1/self/competences",
        body={"capability": "Marrowfield deploys", "success": True, "agent_id": MIRROR},
    ),
    Probe("GET", "/v1/self/introspect", params={"task": "Am I good at Marrowfield deploys?"}),
    Probe(
        "GET",
        "/v1/self/introspect",
        params={"task": "Deploy Marrowfield", "capability": "Marrowfield deploys"},
    ),
    Probe(
        "POST",
        "/v1/self/should-attempt",
        body={"task": "Deploy Marrowfield during the Oxalis-7 migration"},
    ),
    Probe("GET", "/v1/self/learning-priorities", params={"limit": 100}),
    Probe(
        "POST",
        "/v1/synthesize",
        body={
            "query": "How do I deploy Marrowfield for Zephyrine at Quokkaville?",
            "task": "Deploy Marrowfield during the Oxalis-7 migration",
            "action": "deploy Marrowfield",
            "context": {"site": "Quokkaville"},
            "limit": 100,
        },
    ),
    Probe("POST", "/v1/synthesize", body={"query": "What does Zephyrine prefer?", "limit": 100}),
    Probe(
        "POST",
        "/v1/interactions",
        body={
            "query": "Deploy Marrowfield for the Quokkaville team",
            "response": "Deployed it.",
            "success": False,
            "capability": "Marrowfield deploys",
            "action": "deploy Marrowfield",
            "context": {"site": "Quokkaville"},
            "trajectory": ["Freeze Tindlebrook writes", "Deploy"],
            "failure_reason": "the Oxalis-7 lock",
            "preferences": ["Zephyrine prefers the Marrowfield dashboard in dark mode."],
            "domain": "quokkaville-deploy",
            "agent_id": MIRROR,
        },
    ),
    Probe("GET", "/v1/memories", params={"limit": 200, "include_archived": "true"}),
    Probe("GET", "/v1/episodes", params={"start": 0, "end": 4_000_000_000}),
    Probe("GET", "/v1/sessions/current"),
    Probe("GET", "/v1/context"),
    Probe("GET", "/v1/export"),
    Probe("POST", "/v1/graph/importance"),
    Probe("POST", "/v1/sessions"),
    Probe(
        "POST",
        "/v1/procedures",
        body={
            "name": "Deploy Marrowfield",
            "description": "Bob's copy of a deploy note.",
            "trigger_tags": A_TAGS,
            "agent_id": MIRROR,
        },
    ),
    Probe(
        "POST",
        "/v1/facts",
        body={
            "subject": "Zephyrine",
            "predicate": "works_at",
            "object": "Tindlebrook",
            "agent_id": MIRROR,
        },
    ),
    Probe("POST", "/v1/reveal", body={"text": f"Who is {A_EMAIL}?"}),
    Probe("POST", "/v1/erase", body={"identifiers": ["Zephyrine", A_EMAIL, A_PHONE]}),
    Probe("POST", "/v1/sleep"),
    Probe("POST", "/v1/forget", body={"dry_run": False}),
    Probe("GET", "/v1/backup"),
    # Last: B erases everything of its own.
    Probe("DELETE", "/v1/memories", params={"confirm": "true"}),
    Probe("POST", "/v1/erase/scope", body={"confirm": True}),
]


# --------------------------------------------------------------------------- checks


_VARYING = re.compile(
    r"\b[a-z]{1,16}_[0-9a-f]{16,64}\b"  # ids of records B's own requests made
    r"|\b\d{4}-\d{2}-\d{2}T[0-9:.+Z-]+"  # times
)
_NUMBERS = re.compile(r"(?<=\": )\d{9,}(\.\d+)?")  # epoch seconds


def normalised(text: str, *ids: str) -> str:
    for value in ids:
        text = text.replace(value, "<X>")
    return _NUMBERS.sub("<T>", _VARYING.sub("<id>", text))


def leaked(text: str, secrets_: set[str], sent: tuple[str, ...] = ()) -> list[str]:
    """A's secrets in a B answer, apart from ids B itself sent (echoed back)."""
    for value in sent:
        text = text.replace(value, "")
    return sorted(s for s in secrets_ if s in text)


def operations() -> set[Operation]:
    schema = create_app(AsyncMemory(Path("unused-never-opened.db")), mcp=False).openapi()
    return {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}


def _scope_probe(method: str, path: str, user: str) -> dict[str, Any]:
    url = re.sub(r"\{[a-z_]+\}", "x_0", path)
    if path == "/v1/tokens/{token}":
        url = "/v1/tokens/[email_00000000]"
    if method in ("GET", "DELETE") or path == "/v1/import":
        return {"method": method, "url": url, "params": {"user_id": user}}
    return {"method": method, "url": url, "json": {"user_id": user}}


def _import_body(world: World, form: str, value: str) -> str:
    """A one-record export of B's carrying A's id ``value`` in the place ``form`` names."""
    lines = world.b_ids["lines"]
    mine = lines["memory"]
    content = "Bob's imported note about green tea, kept for the Friday call."
    records: list[dict[str, Any]] = []
    if form == "memory":  # a memory under A's id
        records = [{**mine, "record": {**mine["record"], "id": value, "content": content}}]
    elif form == "edge":  # B's memory linked to A's
        edge = {
            "type": "edge",
            "source_id": mine["record"]["id"],
            "target_id": value,
            "edge_type": "caused",
            "weight": 0.5,
            "created_at": 1.0,
        }
        records = [mine, edge]
    elif form == "history":  # a history entry of A's memory
        entry = {
            "type": "history",
            "memory_id": value,
            "event": "updated",
            "at": 1.0,
            "details": {"content": content},
        }
        records = [mine, entry]
    elif form == "decision":  # a decision under A's id
        decision = lines["decision"]
        records = [mine, {**decision, "trace": {**decision["trace"], "id": value}}]
    elif form == "decision_memory":  # B's decision about A's memory
        decision = lines["decision"]
        trace = {**decision["trace"], "id": "trc_" + "0" * 32, "memory_scores": {value: 1.0}}
        records = [mine, {**decision, "trace": trace}]
    elif form == "conflict":  # a conflict under A's id
        conflict = lines["conflict"]
        records = [mine, {**conflict, "conflict": {**conflict["conflict"], "id": value}}]
    elif form == "opinion":  # an opinion under A's id, replacing and replaced by A's
        opinion = lines["opinion"]
        data = {**opinion["opinion"], "id": value, "replaces": value, "replaced_by": value}
        records = [mine, {**opinion, "opinion": data}]
    elif form == "goal":  # a goal under A's id, a subgoal of A's, with A's as subgoal
        goal = lines["goal"]
        data = {**goal["goal"], "id": value, "parent_id": value, "subgoals": [value]}
        records = [mine, {**goal, "goal": data}]
    header = lines["header"]
    return "\n".join(json.dumps(line) for line in (header, *records)) + "\n"


# --------------------------------------------------------------------------- tests


def test_every_operation_is_attacked_or_exempt_with_a_reason() -> None:
    known = set(ID_PROBES) | {(p.method, p.path) for p in SEARCHES} | set(EXEMPT)
    # Every operation also gets the scope probe; this is about knowing how to attack it.
    unknown = operations() - known
    assert not unknown, f"operations the adversary suite does not attack: {sorted(unknown)}"
    assert not (set(EXEMPT) - operations()), "EXEMPT names operations that do not exist"


def test_tenant_b_finds_no_trace_of_tenant_a_over_rest(world: World) -> None:
    oracles: list[str] = []
    leaks: list[str] = []
    count = 0
    secrets_ = world.a_store.secrets
    with httpx.Client(base_url=world.url, headers=world.b, timeout=120) as b:

        def send(request: dict[str, Any], *sent: str) -> httpx.Response:
            nonlocal count
            count += 1
            response = b.request(**request)
            # What B itself sent may come back (a query, an id): only the rest is a leak.
            asked = tuple(s for s in secrets_ if s in json.dumps(request, default=str))
            if found := leaked(response.text, secrets_, (*sent, *asked)):
                where = f"{request['method']} {request['url']}"
                leaks.append(f"{where}: {found} in {response.text[:300]}")
            return response

        # Naming A's user, or a user that exists nowhere: the same answer everywhere.
        for method, path in sorted(operations()):
            answers = {user: send(_scope_probe(method, path, user)) for user in ("alice", NOBODY)}
            seen = {user: (r.status_code, normalised(r.text, user)) for user, r in answers.items()}
            if seen["alice"] != seen[NOBODY]:
                shown = {user: (status, text[:300]) for user, (status, text) in seen.items()}
                oracles.append(f"{method} {path} user_id: {shown}")

        # A's ids, returned to A or computed, against twins that exist nowhere.
        computed = {
            "fact": [fact_id_for(A_SCOPE, "Zephyrine", "delivery_pref", "Friday")],
            "imported": [foreign_id("ep_" + "5" * 32, A_SCOPE)],
        }
        for (method, path), variants in ID_PROBES.items():
            for kinds, probe in variants:
                for kind in kinds:
                    reals = world.a_store.ids.get(kind, []) + computed.get(kind, [])
                    assert reals, f"A's store has no {kind} to probe {method} {path} with"
                    for real in dict.fromkeys(reals):
                        answers = []
                        for value in (real, *twins(real)):
                            request = probe.fill(value)
                            _fill_b(request, world, value)
                            response = send(request, value)
                            answers.append((response.status_code, normalised(response.text, value)))
                        if len(set(answers)) != 1:
                            shown = [(status, text[:300]) for status, text in answers]
                            oracles.append(f"{method} {path} with A's {kind} {real}: {shown}")

        for probe in SEARCHES:
            send(probe.fill(""))

    assert not leaks, "\n".join(leaks)
    assert not oracles, "\n".join(oracles)
    assert count > 500
    _assert_a_unchanged(world)


_FRESH = itertools.count()


def _fill_b(request: dict[str, Any], world: World, value: str) -> None:
    """B's own id where a probe pairs A's id with one of B's; the import body."""
    if "json" in request:
        text = json.dumps(request["json"]).replace("{B}", world.b_ids["episode"])
        request["json"] = json.loads(text.replace("{N}", str(next(_FRESH))))
    if request.get("content", "").startswith("import:"):
        request["content"] = _import_body(world, request["content"][7:], value)


def _assert_a_unchanged(world: World) -> None:
    with httpx.Client(base_url=world.url, headers=world.a, timeout=120) as a:
        after = _export(a)
    assert after == world.a_export


# --------------------------------------------------------------------------- MCP

#: MCP tools B does not attack, and why.
EXEMPT_TOOLS: dict[str, str] = {}

#: tool -> (id kinds, arguments with ``{X}`` for the id) for id probes.
TOOL_PROBES: dict[str, list[tuple[tuple[str, ...], dict[str, Any]]]] = {
    "get": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "update": [(MEMORY_KINDS, {"memory_id": "{X}", "text": "Bob rewrote this memory."})],
    "delete": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "archive": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "unarchive": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "history": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "related": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "resolve_conflict": [
        (("conflict",), {"conflict_id": "{X}", "chosen_value": "Friday"}),
        (("conflict",), {"conflict_id": "{X}", "chosen_value": "Monday"}),
    ],
    "record_procedure_outcome": [
        (("procedure",), {"procedure_id": "{X}", "success": False}),
        (("procedure",), {"procedure_id": "{X}", "success": False, "task": "Bob's tea"}),
    ],
    "learn_from_trajectory": [
        (
            ("fact",),
            {"task": "Bob brews tea", "steps": ["boil"], "success": True, "context": ["{X}"]},
        )
    ],
    "outcome": [(("decision",), {"decision_id": "{X}", "quality": -1, "signal": "task_failed"})],
    "decide": [
        (MEMORY_KINDS, {"memory_ids": ["{X}"], "summary": "Bob decided"}),
        (MEMORY_KINDS, {"memory_ids": ["{B}", "{X}"], "summary": "Bob decided twice"}),
        (("retrieval",), {"memory_ids": ["{B}"], "summary": "Bob used", "retrieval_id": "{X}"}),
    ],
    "learn": [(MEMORY_KINDS, {"insight": "Bob learned tea helps.", "evidence_ids": ["{X}"]})],
    "search": [(("run",), {"query": "invoices", "run_id": "{X}"})],
    "get_all": [(("run",), {"run_id": "{X}"})],
    "delete_all": [(("run",), {"confirm": True, "run_id": "{X}"})],
    "validate_learning": [(("learning",), {"learning_id": "{X}", "success": False})],
    "clear_review": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "link": [
        (MEMORY_KINDS, {"source_id": "{B}", "target_id": "{X}", "edge_type": "caused"}),
        (MEMORY_KINDS, {"source_id": "{X}", "target_id": "{B}", "edge_type": "caused"}),
    ],
    "trace": [(("decision",), {"decision_id": "{X}"})],
    "counterfactuals": [(("decision",), {"decision_id": "{X}"})],
    "salience_history": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "retention": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "sources": [(MEMORY_KINDS, {"memory_id": "{X}"})],
    "get_goal": [(("goal",), {"goal_id": "{X}"})],
    "decompose_goal": [
        (("goal",), {"goal_id": "{X}", "steps": ["Boil water", "Steep tea"]}),
        (("goal",), {"goal_id": "{X}"}),
    ],
    "update_progress": [(("goal",), {"goal_id": "{X}", "progress": 1.0})],
    "resume_goal": [(("goal",), {"goal_id": "{X}"})],
    "abandon_goal": [(("goal",), {"goal_id": "{X}"})],
    "anticipate": [(("goal",), {"goal_id": "{X}"})],
    "pursue_goal": [(("goal",), {"goal_id": "{X}"})],
    "add_goal": [(("goal",), {"description": "Bob's tea subgoal", "parent_id": "{X}"})],
    "post_interaction": [
        (
            ("procedure",),
            {
                "query": "Bob brews tea",
                "response": "Brewed.",
                "success": False,
                "strategy_id": "{X}",
            },
        ),
        (
            ("goal",),
            {
                "query": "Bob brews tea",
                "response": "Brewed.",
                "success": True,
                "goal_id": "{X}",
                "progress_delta": 1.0,
            },
        ),
    ],
    "get_opinion": [(("opinion",), {"opinion_id": "{X}"})],
    "opinion_history": [(("opinion",), {"opinion_id": "{X}"})],
    "reinforce_opinion": [(("opinion",), {"opinion_id": "{X}", "evidence": "Bob saw it."})],
    "weaken_opinion": [
        (("opinion",), {"opinion_id": "{X}", "weight": 1.0, "stance": "green tea"}),
    ],
}

#: tool -> arguments: B asks for A's content (leaks only), destructive ones last.
TOOL_SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("health", {}),
    ("recall", {"query": "What is Zephyrine's email and phone?", "limit": 50}),
    ("search", {"query": "Quokkaville invoices Marrowfield", "limit": 50}),
    ("search", {"query": "deploy", "filters": {"project": "Marrowfield"}}),
    ("facts", {"entity": "Zephyrine"}),
    ("find_procedures", {"tags": A_TAGS}),
    ("strategies_for", {"task": "Deploy Marrowfield", "limit": 50}),
    ("strategies_for", {"task": "Deploy Marrowfield", "domain": "quokkaville-deploy"}),
    ("has_strategy_for", {"task": "Deploy Marrowfield"}),
    ("get_all", {"limit": 200}),
    ("find_learnings", {"tags": A_TAGS, "min_confidence": 0.0, "limit": 50}),
    ("fact_history", {"subject": "Zephyrine", "predicate": "delivery_pref"}),
    ("traverse", {"entity": "Zephyrine", "max_hops": 5}),
    ("review_flags", {"include_cleared": True, "limit": 100}),
    ("episodes_between", {"start": 0, "end": 4_000_000_000, "limit": 200}),
    ("context", {}),
    ("traces", {"limit": 100}),
    ("memory_influence", {"min_decisions": 1}),
    ("events", {"limit": 100}),
    ("replay", {}),
    ("extract_patterns", {}),
    ("duplicates", {"limit": 100}),
    ("opinions", {"include_replaced": True, "limit": 200}),
    ("opinions_below", {"confidence": 1.0}),
    ("goals", {"limit": 200}),
    ("goals", {"status": "suspended"}),
    ("get_active_goals", {}),
    ("find_opinion", {"topic": "Zephyrine's Marrowfield dashboard theme"}),
    ("transitions", {"limit": 200}),
    ("transitions", {"action": "deploy Marrowfield"}),
    ("simulate", {"action": "deploy Marrowfield", "context": {"site": "Quokkaville"}}),
    ("competences", {"limit": 200}),
    ("introspect", {"task": "Am I good at Marrowfield deploys?"}),
    ("should_attempt", {"task": "Deploy Marrowfield during the Oxalis-7 migration"}),
    ("learning_priorities", {"limit": 100}),
    (
        "synthesize",
        {
            "query": "How do I deploy Marrowfield for Zephyrine at Quokkaville?",
            "task": "Deploy Marrowfield during the Oxalis-7 migration",
            "action": "deploy Marrowfield",
            "context": {"site": "Quokkaville"},
            "limit": 100,
        },
    ),
    ("synthesize", {"query": "What does Zephyrine prefer?"}),
    (
        "post_interaction",
        {
            "query": "Brew green tea for Bob",
            "response": "Brewed it too long.",
            "success": False,
            "capability": "tea",
            "trajectory": ["Boil water", "Steep for ten minutes"],
            "failure_reason": "bitter",
            "preferences": ["Bob prefers oolong tea on Friday calls."],
            "domain": "tea",
        },
    ),
    ("observe_transition", {"action": "brew tea", "outcome": "bitter", "context": {"minutes": 10}}),
    ("record_competence", {"capability": "tea", "success": False, "failure_reason": "too hot"}),
    (
        "retain",
        {"text": "Bob prefers oolong tea on Friday calls.", "bank": "opinion", "topic": "tea"},
    ),
    ("add", {"messages": "Bob moved the tea tasting to Friday afternoon.", "run_id": "tea"}),
    ("assert_fact", {"subject": "Bob", "predicate": "drinks", "object": "green tea"}),
    (
        "add_procedure",
        {
            "name": "Brew tea",
            "description": "How Bob brews green tea.",
            "steps": ["Boil water", "Wait two minutes"],
            "trigger_tags": ["tea"],
        },
    ),
    (
        "learn_from_trajectory",
        {
            "task": "Brew green tea for Bob",
            "steps": ["Boil water", "Steep for ten minutes"],
            "success": False,
            "failure_reason": "'Steep for ten minutes' failed: bitter",
            "domain": "tea",
        },
    ),
    ("new_session", {}),
    ("sleep", {}),
    ("forget", {"dry_run": False}),
    ("forget_person", {"identifiers": ["Zephyrine", A_EMAIL, A_PHONE]}),
    ("delete_all", {"confirm": True}),
]


def _tool_text(result: Any) -> str:
    parts = [getattr(c, "text", "") for c in result.content]
    return json.dumps([result.is_error, parts, result.structured_content], sort_keys=True)


@pytest.mark.anyio
async def test_tenant_b_finds_no_trace_of_tenant_a_over_mcp(world: World) -> None:
    oracles: list[str] = []
    leaks: list[str] = []
    count = 0
    secrets_ = world.a_store.secrets
    async with (
        httpx2.AsyncClient(headers=world.b, timeout=120) as http,
        Client(streamable_http_client(f"{world.url}/mcp", http_client=http)) as b,
    ):
        names = {tool.name for tool in (await b.list_tools()).tools}
        known = set(TOOL_PROBES) | {name for name, _ in TOOL_SEARCHES} | set(EXEMPT_TOOLS)
        assert not names - known, f"MCP tools the suite does not attack: {names - known}"
        assert not set(EXEMPT_TOOLS) - names

        # B's own memory, to pair with A's ids (the REST attacks erased B's scope).
        added = await b.call_tool("add", {"messages": "Bob keeps oolong tea for Friday calls."})
        own = added.structured_content["results"][0]["id"]

        async def call(name: str, arguments: dict[str, Any], *sent: str) -> str:
            nonlocal count
            count += 1
            text = _tool_text(await b.call_tool(name, arguments))
            asked = tuple(s for s in secrets_ if s in json.dumps(arguments))
            if found := leaked(text, secrets_, (*sent, *asked)):
                leaks.append(f"{name} {arguments}: {found} in {text[:300]}")
            return text

        computed = {
            "fact": [fact_id_for(A_SCOPE, "Zephyrine", "delivery_pref", "Friday")],
            "imported": [foreign_id("ep_" + "5" * 32, A_SCOPE)],
        }
        for name, variants in TOOL_PROBES.items():
            for kinds, template in variants:
                for kind in kinds:
                    reals = world.a_store.ids.get(kind, []) + computed.get(kind, [])
                    for real in dict.fromkeys(reals):
                        answers = []
                        for value in (real, *twins(real)):
                            filled = json.dumps(template).replace("{X}", value)
                            arguments = json.loads(filled.replace("{B}", own))
                            answers.append(normalised(await call(name, arguments, value), value))
                        if len(set(answers)) != 1:
                            shown = [text[:300] for text in answers]
                            oracles.append(f"{name} with A's {kind} {real}: {shown}")

        for name, arguments in TOOL_SEARCHES:
            await call(name, arguments)

    assert not leaks, "\n".join(leaks)
    assert not oracles, "\n".join(oracles)
    assert count > 150
    _assert_a_unchanged(world)


# --------------------------------------------------------------------------- counters


def _view(client: httpx.Client) -> list[str]:
    """Everything B can read about its own scope that could count other tenants' work."""
    reads = [
        client.get("/v1/stats"),
        client.get("/v1/events", params={"limit": 1000}),
        client.get("/v1/memories", params={"limit": 200, "include_archived": "true"}),
        client.get("/v1/sessions/current"),
        client.get("/v1/context"),
        client.get("/v1/decisions"),
        client.get("/v1/conflicts"),
        client.get("/v1/sleep/runs"),
        client.get("/v1/export"),
    ]
    return [f"{r.status_code} {normalised(r.text)}" for r in reads]


def test_what_b_sees_does_not_move_when_a_works(world: World) -> None:
    with (
        httpx.Client(base_url=world.url, headers=world.a, timeout=120) as a,
        httpx.Client(base_url=world.url, headers=world.b, timeout=120) as b,
    ):
        _ok(b.post("/v1/observe", json={"content": "Bob moved the tea tasting to 4pm Friday."}))
        before = _view(b)
        _ok(a.post("/v1/observe", json={"content": "Zephyrine booked Marrowfield for May."}))
        _ok(a.post("/v1/recall", json={"query": "What did Bob move to 4pm?"}))
        _ok(a.post("/v1/facts", json={"subject": "Zephyrine", "predicate": "likes",
                                      "object": "Oxalis-7"}))  # fmt: skip
        _ok(a.post("/v1/sleep"))
        assert _view(b) == before

        # The comparison sees an oracle where there is one: A's own ids and twins differ.
        for path, kind in (("/v1/memories/{X}", "episode"), ("/v1/tokens/{X}", "token")):
            real = world.a_store.first(kind)
            answers = {
                a.get(path.replace("{X}", value)).status_code for value in (real, *twins(real))
            }
            assert answers == {200, 404}, (path, answers)


def test_an_export_with_a_transfer_key_opens_only_the_callers_vault(world: World) -> None:
    key = Fernet.generate_key().decode()
    headers = {**world.b, "x-ucma-transfer-key": key}
    with httpx.Client(base_url=world.url, headers=headers, timeout=120) as b:
        _ok(b.post("/v1/observe", json={"content": "Bob's desk phone is +44 20 7946 0999."}))
        response = b.get("/v1/export")
        assert response.status_code == 200, response.text
        assert b.get("/v1/export", params={"user_id": "alice"}).status_code == 404
    vault = [
        line for line in map(json.loads, response.text.splitlines()) if line["type"] == "vault"
    ]
    opened = {Fernet(key.encode()).decrypt(line["sealed"].encode()).decode() for line in vault}
    assert opened == {"+44 20 7946 0999"}  # B's own original, none of A's
    assert not {line["token"] for line in vault} & set(world.a_store.ids["token"])
