"""The OpenAPI schema states what the service does: schemathesis with all its checks.

Requests generated from the service's own schema, valid ones and invalid ones, go to the
real app on a loopback uvicorn server with API keys required (real engine, real SQLite,
real embedder). Every check schemathesis has runs: no server error, every status and
content type documented, every body (errors included) matches its schema, invalid input
refused, valid input accepted, and a method a path does not serve answers 405 with the
right ``Allow`` header.

Only schemathesis's public API is used (``schemathesis.checks`` names the built-in
checks, as its documentation and CLI do).

One allowance: JSON Schema cannot say that two fields must agree (a range's start before
its end, one score per id). A valid-looking request breaking such a rule may get 422, but
only when the operation's own description states that rule in the words of the error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis import CheckContext, GenerationMode, checks

from ucma.engine import AsyncMemory
from ucma.server import create_app

pytestmark = pytest.mark.integration


@schemathesis.serializer("application/x-ndjson", "application/jsonl", "application/json-lines")
def jsonl(ctx: schemathesis.SerializationContext, value: object) -> bytes:
    """Import bodies are JSON Lines text; generated strings are sent as UTF-8."""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


#: The schema is read from an app that is never started (an engine is opened lazily).
SCHEMA = schemathesis.openapi.from_dict(
    create_app(AsyncMemory(Path("unused-never-opened.db")), require_keys=True, mcp=False).openapi()
)
SCHEMA.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE])

#: (method, path) -> words of a rule between fields (or of each rule, a tuple), in both
#: the 422 message and the operation's description.
CROSS_FIELD_RULES = {
    ("GET", "/v1/facts"): "cannot be combined",
    ("POST", "/v1/facts"): "must not be before",
    ("GET", "/v1/episodes"): "must not be before its start",
    ("POST", "/v1/remember"): "start <= end",
    ("POST", "/v1/recall"): "start <= end",
    ("POST", "/v1/decisions"): "one score",
    ("POST", "/v1/retain"): "topic is for the opinion bank",
    # ECMA regular expressions (JSON Schema's) read \w as ASCII: no pattern can say
    # "two letters or digits of any alphabet".
    ("POST", "/v1/erase"): "two letters or digits",
    # An import body is JSON Lines: a schema of a string cannot state an export.
    ("POST", "/v1/import"): ("request body", "Fernet key"),
    # The transfer key header: schemathesis sends values outside its length and pattern
    # (such as "0") in cases it counts as positive.
    ("GET", "/v1/export"): "Fernet key",
    ("POST", "/v1/trajectories"): "failed trajectory only",
    ("POST", "/v1/self/competences"): "failed attempt only",
    # A context may not name one condition twice once case and spacing are folded.
    ("POST", "/v1/world/transitions"): "twice",
    ("POST", "/v1/world/simulate"): "twice",
    ("POST", "/v1/self/should-attempt"): "twice",
    ("POST", "/v1/goals/{goal_id}/progress"): "exactly one of progress or delta",
    ("POST", "/v1/synthesize"): "twice",
    ("POST", "/v1/interactions"): (
        "failed interaction only",
        "needs the goal_id it moves",
        "twice",
    ),
    ("POST", "/v1/procedures/{procedure_id}/outcome"): (
        "failed application only",
        "the task they were discovered in",
    ),
}


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory,
    live_server: Callable[[object], AbstractContextManager[str]],
) -> Iterator[tuple[str, dict[str, str]]]:
    home = tmp_path_factory.mktemp("contract")
    token = asyncio.run(_create_key(home / "ucma.db", "alice"))
    with live_server(create_app(home=home, require_keys=True, mcp=False)) as url:
        yield url, {"authorization": f"Bearer {token}"}


async def _create_key(path: Path, user_id: str) -> str:
    async with AsyncMemory(path) as memory:
        _, token = await memory.create_key(user_id)
    return token


def _documented_rule_or_accepted(ctx: CheckContext, response: object, case: schemathesis.Case):
    """positive_data_acceptance, but a 422 for a documented rule between fields passes."""
    rules = CROSS_FIELD_RULES.get((case.method.upper(), case.path), ())
    status = getattr(response, "status_code", None)
    if status == 422:
        message = response.json()["error"]["message"]  # type: ignore[attr-defined]
        described = case.operation.definition.raw.get("description", "")
        for rule in (rules,) if isinstance(rules, str) else rules:
            if rule in message:
                assert rule in described, f"the rule {rule!r} is not in the description"
                return True
    return checks.positive_data_acceptance(ctx, response, case)  # type: ignore[arg-type]


@SCHEMA.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
    database=None,
    derandomize=True,
)
def test_the_service_does_what_its_schema_says(
    case: schemathesis.Case, service: tuple[str, dict[str, str]]
) -> None:
    base_url, headers = service
    response = case.call(base_url=base_url, headers=headers, timeout=60)
    case.validate_response(
        response,
        excluded_checks=[checks.positive_data_acceptance],
        additional_checks=[_documented_rule_or_accepted],
        headers=headers,
    )
