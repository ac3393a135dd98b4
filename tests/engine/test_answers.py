"""Answers and LLM context from small everyday stores (issue 12, "Answers"): whole memories
or clean facts, never broken templates; current values only, a change noted once; conflicts
only where they concern the question; no chit-chat as an answer; abstention on low
confidence; an LLM composes from the same material and cites it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ucma.config import CascadeConfig, UCMAConfig
from ucma.conflicts.answer import UNKNOWN
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.lifecycle.clock import SimulatedClock
from ucma.providers.answers import ChatAnswerWriter
from ucma.providers.base import Providers
from ucma.providers.testing import FAKE_BASE_URL, Failure, FakeOpenAIServer
from ucma.types import ConflictStatus

pytestmark = pytest.mark.anyio

DAY = 86_400.0
NOW = 1_767_000_000.0
# A sentence fragment ending on a verb or article, as in "Dana's birthday is."
BROKEN = re.compile(r"\b(is|are|was|the|a|an|of|to|in|at)\s*[.!?]", re.IGNORECASE)


def _memory(path: Path, embedder: LocalEmbedder, **kwargs: Any) -> AsyncMemory:
    clock = SimulatedClock(NOW)
    return AsyncMemory(path, user_id="dana", embedder=embedder, clock=clock, **kwargs)


async def _pending_delivery_conflict(mem: AsyncMemory) -> None:
    """A dispute about another topic: the old value confirmed, the new one not, at once."""
    await mem.assert_fact("Project Falcon", "delivery_pref", "Thursday")
    await mem.assert_fact("Project Falcon", "delivery_pref", "Thursday")
    await mem.assert_fact("Project Falcon", "delivery_pref", "Friday")
    [conflict] = await mem.conflicts(status="pending")
    assert conflict.subject == "Project Falcon"


async def test_first_person_birthday_is_quoted_whole_never_a_broken_template(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(db_path, local_embedder) as mem:
        await mem.observe("My birthday is on March 14.", source="Dana")
        await mem.observe("Dana prefers meetings in the morning.")
        await mem.sleep()
        answer = await mem.answer("When is Dana's birthday?")
        assert "March 14" in answer.response, answer.response
        assert not BROKEN.search(answer.response), answer.response
        assert "meetings" not in answer.response
        assert answer.sources and all("March 14" in s for s in answer.sources)


async def test_superseded_value_is_never_presented_as_current(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(db_path, local_embedder) as mem:
        await mem.assert_fact("Dana", "lives_in", "Boston", valid_from=NOW - 400 * DAY)
        initech = await mem.assert_fact("Dana", "works_at", "Initech", valid_until=NOW - DAY)
        await mem.observe("Dana is allergic to peanuts.")
        await mem.recall("Where does Dana live?")  # stages Boston in working memory
        # As if an earlier recall had staged the job before it expired.
        assert mem.working_memory().add(initech.id, initech.content, "staging", 0.9)
        await mem.assert_fact("Dana", "lives_in", "Denver", valid_from=NOW - 10 * DAY)
        history = await mem.fact_history("Dana", "lives_in")
        assert [f.is_current for f in history] == [False, True]  # the write superseded it

        answer = await mem.answer("Where does Dana live?")
        assert "Dana lives in Denver (previously Boston)." in answer.response, answer.response
        assert answer.response.count("Boston") == 1
        assert "Lives in is" not in answer.response and "recently updated" not in answer.response
        assert [f.object for f in answer.facts] == ["Denver"]
        assert not answer.disambiguation_required

        # Recall staged the superseded fact; the context shows only the current value.
        staged = mem.working_memory().items("staging")
        assert any("Boston" in item.content for item in staged)
        assert any("Initech" in item.content for item in staged)
        context = await mem.current_context()
        assert context == mem.context()
        lines = context.splitlines()
        assert "Dana lives in Denver (previously Boston)." in lines
        assert not any("Boston" in line and "previously" not in line for line in lines)
        assert len(lines) == len(set(lines))
        assert "Initech" not in context

        expired = await mem.answer("Where does Dana work?")
        assert "Initech" not in expired.response
        assert all(f.object != "Initech" for f in expired.facts)


async def test_unrelated_pending_conflict_stays_out_of_the_answer(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(db_path, local_embedder) as mem:
        await mem.observe("Dana is allergic to peanuts.")
        await _pending_delivery_conflict(mem)

        answer = await mem.answer("What food restrictions does Dana have?")
        assert answer.response == "From memory: Dana is allergic to peanuts.", answer.response
        assert answer.conflicts == [] and not answer.disambiguation_required
        assert "conflicting" not in answer.response

        asked = await mem.answer("Which day does Project Falcon prefer for deliveries?")
        assert asked.disambiguation_required, asked.response
        assert asked.options == ["Thursday", "Friday"]
        assert [c.status for c in asked.conflicts] == [ConflictStatus.PENDING]
        assert "I have conflicting information about delivery preference" in asked.response


async def test_chit_chat_is_never_the_answer(db_path: Path, local_embedder: LocalEmbedder) -> None:
    async with _memory(db_path, local_embedder) as mem:
        await mem.observe("ok thanks")
        await mem.observe("lol")
        await mem.observe("Dana is allergic to peanuts.")
        for question in ("ok thanks", "thanks!", "lol"):
            answer = await mem.answer(question)
            assert "ok thanks" not in answer.response.lower(), answer.response
            assert "From memory: lol" not in answer.response
        assert "ok thanks" not in mem.context() and "lol" not in mem.context().split()


async def test_low_confidence_says_it_does_not_know_and_keeps_the_hits(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    strict = UCMAConfig(cascade=CascadeConfig(confidence_threshold=1.0))
    async with _memory(db_path, local_embedder, config=strict) as mem:
        await mem.observe("Dana is allergic to peanuts.")
        await _pending_delivery_conflict(mem)
        answer = await mem.answer("What food restrictions does Dana have?")
        assert answer.low_confidence and answer.response == UNKNOWN
        assert answer.hits and answer.facts == [] and answer.conflicts == []
        assert "peanuts" not in answer.response
        assert answer.to_dict()["low_confidence"] is True


def _writer(server: FakeOpenAIServer) -> ChatAnswerWriter:
    return ChatAnswerWriter(
        "fake-chat",
        base_url=FAKE_BASE_URL,
        api_key="test",
        http_client=server.async_client(),
        timeout=5.0,
    )


async def test_an_llm_composes_the_answer_from_the_same_material_and_cites_it(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    server = FakeOpenAIServer()
    writer = _writer(server)
    async with _memory(db_path, local_embedder, providers=Providers(writer, writer)) as mem:
        await mem.observe("Dana is allergic to peanuts.")
        await _pending_delivery_conflict(mem)
        # A citation of a memory it was not given is refused and retried.
        server.queue_chat("Dana avoids shellfish [4].", "Dana is allergic to peanuts [1].")
        answer = await mem.answer("What food restrictions does Dana have?")
        assert answer.response == "Dana is allergic to peanuts [1]."
        assert answer.composed_by == "openai:fake-chat"
        assert answer.sources == ["Dana is allergic to peanuts."]
        prompt = server.chat_requests[-1].body["messages"][1]["content"]
        assert "[1] Dana is allergic to peanuts." in prompt
        assert "Project Falcon" not in prompt and "Notes:" not in prompt

        # The model failing leaves the offline answer, with a caveat.
        server.queue_chat(Failure.SERVER_ERROR, Failure.SERVER_ERROR)
        fallback = await mem.answer("What food restrictions does Dana have?")
        assert fallback.response == "From memory: Dana is allergic to peanuts."
        assert fallback.composed_by == "template"
        assert any("language model" in c for c in fallback.caveats)
    await writer.aclose()
