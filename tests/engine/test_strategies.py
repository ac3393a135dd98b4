"""Strategies learned from trajectories (issue 15, seed 000's procedural paradigm),
through the public API on a real SQLite file and the packaged embedding model."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from ucma.config import ConflictConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ContentRefusedError, NotFoundError, ProviderError, ValidationError
from ucma.events.log import replay_strategies
from ucma.privacy.tokens import TOKEN_PATTERN
from ucma.providers.base import Providers
from ucma.providers.openai import OpenAIChatProvider
from ucma.providers.testing import FAKE_BASE_URL, FakeOpenAIServer
from ucma.types import (
    Fact,
    Procedure,
    ProcedureStatus,
    ProcedureType,
    RiskLevel,
    TrajectoryLearning,
)

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

PAGES = {"subject": "results list", "predicate": "layout", "object": "paginated"}
ONE_PAGE = {"subject": "results list", "predicate": "layout", "object": "single page"}


def _memory(path: Path, embedder: LocalEmbedder, clock: Callable[[], float] | None = None):
    # The agent's environment has one layout at a time: a functional predicate.
    config = UCMAConfig(conflicts=ConflictConfig(functional_predicates=("layout",)))
    return AsyncMemory(path, user_id="alice", embedder=embedder, config=config, clock=clock)


async def test_a_success_distils_the_strategy_that_worked(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        learned = await memory.learn_from_trajectory(
            "Collect every review from the bookshop",
            ["follow the next page links", "parse the reviews"],
            True,
            domain="Scraping",
            context=[PAGES],
        )
        [strategy] = learned.items
        assert learned.merged_ids == ()
        assert strategy.procedure_type is ProcedureType.STRATEGY
        assert strategy.name == "follow the next page links then parse the reviews"
        assert [s.description for s in strategy.steps] == [
            "follow the next page links",
            "parse the reviews",
        ]
        assert strategy.domain == "scraping"
        assert [c.object for c in strategy.preconditions] == ["paginated"]
        assert strategy.source_trajectories == [learned.trajectory_id]
        assert (strategy.execution_count, strategy.success_count) == (0, 0)
        assert strategy.status is ProcedureStatus.DRAFT
        stored = await memory.get(strategy.id)
        assert stored == strategy


async def test_a_failure_distils_a_pitfall_and_fact_ids_give_the_context(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        fact = await memory.assert_fact("results list", "layout", "paginated")
        learned = await memory.learn_from_trajectory(
            "Collect every review from the bookshop",
            ["log in", "download the sitemap dump", "parse the reviews"],
            False,
            "'download the sitemap dump' failed: request rejected",
            domain="scraping",
            context=[fact.id],
        )
        [pitfall] = learned.items
        assert pitfall.procedure_type is ProcedureType.PITFALL
        assert [(s.description, s.action_type) for s in pitfall.steps] == [
            ("download the sitemap dump", "avoid")
        ]
        assert pitfall.failure_modes == ["'download the sitemap dump' failed: request rejected"]
        assert pitfall.risk_level is RiskLevel.HIGH
        assert [c.object for c in pitfall.preconditions] == ["paginated"]
        # The pitfall is found for the task, and it applies: its situation holds now.
        [found] = await memory.strategies_for("Collect the reviews of the bookshop")
        assert found.is_pitfall and found.grounding == "met"

        with pytest.raises(NotFoundError):
            await memory.learn_from_trajectory("t", ["s"], True, context=["fact_" + "0" * 32])
        for bad in (
            {"steps": []},
            {"steps": "one step"},
            {"success": "yes"},
            {"failure_reason": "why", "success": True},
            {"context": [{"subject": "x"}]},
            {"domain": " "},
        ):
            kwargs = {"task": "t", "steps": ["s"], "success": False, **bad}
            with pytest.raises(ValidationError):
                await memory.learn_from_trajectory(**kwargs)  # type: ignore[arg-type]


async def test_near_duplicates_merge_and_keep_the_preconditions_both_had(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    login = {"subject": "bookshop", "predicate": "login", "object": "optional"}
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        first = await memory.learn_from_trajectory(
            "Collect every review from the bookshop",
            ["follow the next page links", "parse the reviews"],
            True,
            domain="scraping",
            context=[PAGES, login],
        )
        second = await memory.learn_from_trajectory(
            "Gather the customer comments on the deli",
            ["follow the next page links", "parse the reviews"],
            True,
            domain="scraping",
            context=[PAGES],
        )
        [original] = first.items
        [merged] = second.items
        assert second.merged_ids == (original.id,)
        assert merged.id == original.id
        assert merged.source_trajectories == [first.trajectory_id, second.trajectory_id]
        assert [c.object for c in merged.preconditions] == ["paginated"]
        # Another plan, or the same plan in another domain, is another strategy.
        other = await memory.learn_from_trajectory(
            "Collect every review from the bookshop",
            ["download the sitemap dump", "parse the reviews"],
            True,
            domain="scraping",
        )
        elsewhere = await memory.learn_from_trajectory(
            "Collect every review from the bookshop",
            ["follow the next page links", "parse the reviews"],
            True,
            domain="testing",
        )
        assert other.merged_ids == () and elsewhere.merged_ids == ()
        # A pitfall is about one situation: the same failure elsewhere is another warning.
        reason = "'download the sitemap dump' failed: rejected"
        steps = ["download the sitemap dump"]
        p1 = await memory.learn_from_trajectory("t", steps, False, reason, context=[PAGES])
        p2 = await memory.learn_from_trajectory("t", steps, False, reason, context=[PAGES])
        p3 = await memory.learn_from_trajectory("t", steps, False, reason, context=[ONE_PAGE])
        assert p2.merged_ids == (p1.items[0].id,)
        assert p3.merged_ids == ()


async def test_pitfalls_generalise_over_one_differing_condition_and_a_success_refutes_them(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    def site(layout: str, rate: str, login: str) -> list[dict[str, str]]:
        return [
            {"subject": "results list", "predicate": "layout", "object": layout},
            {"subject": "site", "predicate": "rate limit", "object": rate},
            {"subject": "site", "predicate": "login", "object": login},
        ]

    reason = "'download the sitemap dump' failed: request rejected"
    steps = ["download the sitemap dump", "parse the items"]

    async def fail(memory: AsyncMemory, context: list[dict[str, str]]) -> TrajectoryLearning:
        return await memory.learn_from_trajectory(
            "Scrape the shop", steps, False, reason, domain="scraping", context=context
        )

    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        first = (await fail(memory, site("paginated", "strict", "required"))).items[0]
        # The same step fails where only the layout differs: the warning is about what
        # both situations share, whatever the layout.
        second = await fail(memory, site("single page", "strict", "required"))
        assert second.merged_ids == (first.id,)
        merged = second.items[0]
        assert {c.object for c in merged.preconditions} == {"strict", "required"}
        # A failure two conditions away stays a warning of its own.
        apart = await fail(memory, site("single page", "lenient", "optional"))
        assert apart.merged_ids == ()
        for fact in site("infinite scroll", "strict", "required"):
            await memory.assert_fact(fact["subject"], fact["predicate"], fact["object"])
        found = await memory.strategies_for("Scrape the shop", domain="scraping", limit=10)
        [applies] = [m for m in found if m.procedure.id == first.id]
        assert applies.is_pitfall and applies.grounding == "met"  # a layout never seen
        # The step working under the pitfall's conditions refutes it: deprecated, out of
        # the ranking, logged, and later failures start a new warning.
        worked = await memory.learn_from_trajectory(
            "Scrape the shop",
            steps,
            True,
            domain="scraping",
            context=site("infinite scroll", "strict", "required"),
        )
        assert worked.refuted_ids == (first.id,)
        refuted = await memory.get(first.id)
        assert refuted.status is ProcedureStatus.DEPRECATED
        found = await memory.strategies_for("Scrape the shop", domain="scraping", limit=10)
        assert first.id not in {m.procedure.id for m in found}
        kept = await memory.get(apart.items[0].id)  # its conditions did not hold
        assert kept.status is ProcedureStatus.DRAFT
        [change] = [
            e
            for e in await memory.events(types=["procedure.status_changed"])
            if e.payload["memory_id"] == first.id
        ]
        assert change.payload["to"] == "deprecated"
        assert change.payload["trajectory_id"] == worked.trajectory_id
        again = await fail(memory, site("paginated", "strict", "required"))
        assert again.merged_ids == () and again.items[0].id != first.id
        assert (await memory.replay()).matches_live


async def test_ranking_uses_the_lower_bound_so_one_of_one_does_not_beat_45_of_50(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        task = "Back up the orders database"
        lucky = (await memory.learn_from_trajectory(task, ["copy the data files"], True)).items[0]
        proven = (await memory.learn_from_trajectory(task, ["run pg_dump"], True)).items[0]
        await memory.record_procedure_outcome(lucky.id, True)
        for i in range(50):
            await memory.record_procedure_outcome(proven.id, i % 10 != 0)
        ranked = await memory.strategies_for(task)
        assert [m.procedure.id for m in ranked] == [proven.id, lucky.id]
        assert ranked[0].procedure.success_count == 45
        assert ranked[0].procedure.execution_count == 50
        assert ranked[0].lower_bound > ranked[1].lower_bound > 0
        assert ranked[1].procedure.success_rate == 1.0  # the better raw rate, ranked second
        assert await memory.has_strategy_for(task)
        assert not await memory.has_strategy_for("Bake a lemon cake for the party")


async def test_status_moves_by_evidence_and_decides_forgetting_protection(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    now = [1_700_000_000.0]
    async with _memory(tmp_path / "m.db", local_embedder, clock=lambda: now[0]) as memory:
        task = "Deploy the billing service"
        good = (await memory.learn_from_trajectory(task, ["roll out the image"], True)).items[0]
        bad = (await memory.learn_from_trajectory(task, ["restart every node"], True)).items[0]
        statuses = []
        for _ in range(5):
            statuses.append((await memory.record_procedure_outcome(good.id, True)).status)
            await memory.record_procedure_outcome(bad.id, False)
        assert statuses[:4] == [ProcedureStatus.DRAFT] * 4
        assert statuses[4] is ProcedureStatus.ACTIVE
        assert (await memory.get(bad.id)).status is ProcedureStatus.DEPRECATED
        # A deprecated strategy is not offered any more.
        assert [m.procedure.id for m in await memory.strategies_for(task)] == [good.id]
        now[0] += 400 * 86_400
        report = await memory.forget(dry_run=True)
        archived = {v.memory_id for v in report.archived}
        assert bad.id in archived
        assert good.id not in archived


async def test_flow_1_facts_ground_strategies(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    """Seed 000 flow 1: "This is a paginated list" -> "Use pagination strategy"; "User
    struggled with X" -> "Avoid X-related strategies"."""
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        task = "Read all the results of the search"
        paging = await memory.learn_from_trajectory(
            task, ["use the pagination strategy"], True, context=[PAGES]
        )
        whole = await memory.learn_from_trajectory(
            task, ["read the whole page at once"], True, context=[ONE_PAGE]
        )
        struggled = await memory.learn_from_trajectory(
            task,
            ["export the results to a spreadsheet"],
            False,
            "the user struggled with the spreadsheet",
        )
        await memory.assert_fact("results list", "layout", "paginated")  # "a paginated list"
        found = await memory.strategies_for(task)
        by_id = {m.procedure.id: m for m in found}
        assert paging.items[0].id in by_id and by_id[paging.items[0].id].grounding == "met"
        assert whole.items[0].id not in by_id  # its precondition contradicts the facts
        assert by_id[struggled.items[0].id].is_pitfall  # what to avoid, found with them
        flagged = await memory.strategies_for(task, contradicted="flag", limit=10)
        assert flagged[-1].procedure.id == whole.items[0].id
        assert flagged[-1].grounding == "contradicted"
        assert [c.object for c in flagged[-1].contradicted] == ["single page"]
        # The list changes: the facts now ground the other strategy.
        await memory.assert_fact("results list", "layout", "single page")
        ids = [m.procedure.id for m in await memory.strategies_for(task)]
        assert whole.items[0].id in ids and paging.items[0].id not in ids


async def test_flow_2_applying_a_strategy_produces_experience_and_facts(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    """Seed 000 flow 2: "Pagination strategy worked for task X" -> "I successfully used
    pagination"; "Filtering before pagination works better" -> "This site requires
    filtering before pagination"; "Strategy X fails in context Y" -> a belief at 0.8."""
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        [strategy] = (
            await memory.learn_from_trajectory(
                "List the shop's products", ["use the pagination strategy"], True
            )
        ).items
        applied = await memory.record_procedure_outcome(
            strategy.id,
            True,
            task="listing the shop's products",
            discoveries=[
                {
                    "subject": "this site",
                    "predicate": "requires",
                    "object": "filtering before pagination",
                    "confidence": 0.9,
                }
            ],
        )
        assert (applied.execution_count, applied.success_count) == (1, 1)
        [hit] = await memory.remember("Which strategy did I use for the shop's products?", limit=1)
        assert hit.content == (
            "Used strategy 'use the pagination strategy' for listing the shop's products: succeeded"
        )
        related = await memory.related(hit.id)  # the experience -applied-> the strategy
        assert strategy.id in {record.id for record, _, _ in related}
        [pattern] = await memory.facts_about("this site")
        assert (pattern.object, pattern.confidence) == ("filtering before pagination", 0.9)
        assert pattern.source_episode_ids == [hit.id]

        failed = await memory.record_procedure_outcome(
            strategy.id,
            False,
            task="listing the archive",
            failure_reason="the archive has no pages",
        )
        assert failed.failure_modes == ["the archive has no pages"]
        assert failed.risk_level is RiskLevel.MEDIUM
        [belief] = [
            f
            for f in await memory.facts_about("use the pagination strategy")
            if isinstance(f, Fact)
        ]
        assert (belief.predicate, belief.object, belief.confidence) == (
            "fails when",
            "the archive has no pages",
            0.8,
        )
        with pytest.raises(ValidationError):
            await memory.record_procedure_outcome(
                strategy.id, True, discoveries=[{"subject": "a", "predicate": "b", "object": "c"}]
            )


async def test_replay_of_the_events_equals_the_live_strategies(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        task = "Back up the orders database"
        a = (
            await memory.learn_from_trajectory(task, ["run pg_dump"], True, context=[PAGES])
        ).items[0]
        await memory.learn_from_trajectory("Save the orders", ["run pg_dump"], True)
        b = (await memory.learn_from_trajectory(task, ["copy files"], False, "locked")).items[0]
        for i in range(6):
            await memory.record_procedure_outcome(a.id, i != 3, failure_reason=None)
        await memory.record_procedure_outcome(a.id, False, failure_reason="disk full")
        projection = replay_strategies(await memory.events(limit=10_000))
        for procedure_id in (a.id, b.id):
            live = await memory.get(procedure_id)
            state = projection[procedure_id]
            assert state.application_count == live.execution_count
            assert state.success_count == live.success_count
            assert state.status == live.status.value
            assert state.source_trajectories == live.source_trajectories
            assert state.preconditions == [list(c.key()) for c in live.preconditions]
            assert state.failure_modes == live.failure_modes
        assert projection[a.id].application_count == 7
        assert projection[a.id].status == "active"
        assert len(projection[a.id].source_trajectories) == 2
        replayed = await memory.replay()
        assert replayed.matches_live, replayed.mismatches
        assert replayed.strategies == 2


async def _applied(memory: AsyncMemory, *outcomes: bool) -> Procedure:
    """A strategy learned from one success, then applied with these outcomes."""
    [strategy] = (
        await memory.learn_from_trajectory("Back up the orders", ["run pg_dump"], True)
    ).items
    for ok in outcomes:
        strategy = await memory.record_procedure_outcome(strategy.id, ok)
    return strategy


async def test_replay_names_a_strategy_changed_without_its_event(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        strategy = await _applied(memory, True)
        storage = await memory._ready()
        live = await memory.get(strategy.id)
        with storage.transaction():  # a write that forgets its event
            storage.procedures.update(replace(live, success_count=0))
        replayed = await memory.replay()
        assert not replayed.matches_live
        mismatch = replayed.mismatches[strategy.id]
        assert (mismatch.field, mismatch.replayed, mismatch.live) == ("success_count", 1, 0)


async def test_replay_after_import_equals_the_imported_strategies(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "a.db", local_embedder) as memory:
        strategy = await _applied(memory, True, True, True, False)
        await memory.learn_from_trajectory("Back up", ["copy files"], False, "locked")
        lines = [line async for line in memory.export_lines()]
    async with _memory(tmp_path / "b.db", local_embedder) as copy:
        await copy.import_lines(lines)
        replayed = await copy.replay()
        assert replayed.matches_live, replayed.mismatches
        assert replayed.strategies == 2
        imported = await copy.get(strategy.id)
        assert (imported.execution_count, imported.success_count) == (4, 3)


async def test_export_then_import_reproduces_the_strategies(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "a.db", local_embedder) as memory:
        [strategy] = (
            await memory.learn_from_trajectory(
                "Back up the orders database", ["run pg_dump"], True, context=[PAGES]
            )
        ).items
        await memory.record_procedure_outcome(strategy.id, False, failure_reason="disk full")
        [pitfall] = (
            await memory.learn_from_trajectory("Back up", ["copy files"], False, "locked")
        ).items
        lines = [line async for line in memory.export_lines()]
        originals = [await memory.get(strategy.id), await memory.get(pitfall.id)]
    async with _memory(tmp_path / "b.db", local_embedder) as copy:
        await copy.import_lines(lines)
        for original in originals:
            assert await copy.get(original.id) == original
        [found, *_] = await copy.strategies_for("Back up the orders database")
        assert found.procedure.id == strategy.id


async def test_a_configured_llm_distils_instead_of_the_rules(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    server = FakeOpenAIServer()
    llm = OpenAIChatProvider(
        "fake-chat",
        base_url=FAKE_BASE_URL,
        api_key="test",
        http_client=server.async_client(),
        attempts=2,
        timeout=5.0,
    )
    providers = Providers(summarizer=llm, fact_extractor=llm, distiller=llm)
    items = [
        {
            "title": "Check the lock before copying",
            "description": "Before copying database files, make sure no writer holds them.",
            "steps": ["check for open writers", "stop the writers first"],
            "failure_modes": ["files copied while locked are torn"],
        },
        {
            "title": "Prefer a logical dump",
            "description": "A dump is consistent where a file copy is not.",
            "steps": ["use pg_dump instead of copying files"],
            "risk_level": "medium",
        },
    ]
    server.queue_chat("not json", json.dumps({"items": items}))
    async with AsyncMemory(
        tmp_path / "m.db", user_id="alice", embedder=local_embedder, providers=providers
    ) as memory:
        learned = await memory.learn_from_trajectory(
            "Back up the orders database", ["copy the data files"], False, "the copy was torn"
        )
        assert [p.name for p in learned.items] == [i["title"] for i in items]
        assert {p.procedure_type for p in learned.items} == {ProcedureType.PITFALL}
        assert {p.provenance.value for p in learned.items} == {"generated"}
        assert learned.items[0].failure_modes == ["files copied while locked are torn"]
        assert [s.action_type for s in learned.items[0].steps] == ["check", "check"]
        assert learned.items[1].risk_level is RiskLevel.MEDIUM
        prompt = server.chat_requests[-1].body["messages"][1]["content"]
        assert "Outcome: failed: the copy was torn" in prompt
        # Two malformed answers: a ProviderError, and nothing is kept.
        server.queue_chat(json.dumps({"items": []}), json.dumps({"items": [{"title": "x"}]}))
        with pytest.raises(ProviderError):
            await memory.learn_from_trajectory("Back up the users", ["copy files"], True)
        assert (await memory.get_all(kind="procedural")).total == 2
    await llm.aclose()


async def test_personal_data_in_a_trajectory_is_tokenised_and_secrets_refused(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    email = "greta.lindqvist@example.org"
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        learned = await memory.learn_from_trajectory(
            f"Send the report to {email}",
            [f"mail {email}"],
            False,
            f"'mail {email}' failed: mailbox full",
            context=[{"subject": "recipient", "predicate": "address", "object": email}],
        )
        [pitfall] = learned.items
        stored = await memory.get(pitfall.id)
        texts = [
            stored.content,
            stored.name,
            *(s.description for s in stored.steps),
            *stored.failure_modes,
            *(c.object for c in stored.preconditions),
        ]
        for text in texts:
            assert email not in text
        [token] = [m.group() for m in TOKEN_PATTERN.finditer(stored.preconditions[0].object)]
        assert await memory.reveal(token) == email
        with pytest.raises(ContentRefusedError):
            await memory.learn_from_trajectory(
                "Deploy",
                ["export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
                True,
            )
        assert (await memory.get_all(kind="procedural")).total == 1


async def test_an_imported_strategy_passes_the_content_guard(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    email = "greta.lindqvist@example.org"
    async with _memory(tmp_path / "a.db", local_embedder) as memory:
        await memory.learn_from_trajectory("t", ["s"], False, "r", context=[PAGES])
        lines = [json.loads(line) for line in [x async for x in memory.export_lines()] if line]
    for line in lines:
        if line.get("type") == "memory":
            line["record"]["failure_modes"] = [f"bounced from {email}"]
            line["record"]["preconditions"][0]["object"] = email
            strategy_id = line["record"]["id"]
    async with _memory(tmp_path / "b.db", local_embedder) as copy:
        await copy.import_lines([json.dumps(line) for line in lines])
        stored = await copy.get(strategy_id)
        assert email not in stored.failure_modes[0]
        assert TOKEN_PATTERN.fullmatch(stored.preconditions[0].object)
        assert await copy.reveal(stored.preconditions[0].object) == email
