"""Export and import end to end: the round trip reproduces the store, import streams in
chunks, resumes after an interruption without duplicates, and re-embeds foreign vectors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from ucma import exchange
from ucma.config import LimitsConfig, UCMAConfig
from ucma.embeddings import Embedder, LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import InputLimitError, NotFoundError, ValidationError
from ucma.memory_ids import owned_by
from ucma.providers.testing import fake_embedding
from ucma.types import Fact, ImportReport, Learning, Scope, fact_id_for

pytestmark = pytest.mark.anyio

CLOCK = iter(range(1_700_000_000, 1_800_000_000))


class CountingFakeEmbedder(Embedder):
    """A deterministic 384-wide embedder under another model id; counts what it embeds."""

    model_id = "fake-384"
    dimension = 384

    def __init__(self) -> None:
        self.texts = 0

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return np.stack([fake_embedding(t, self.dimension) for t in texts])


async def lines_of(memory: AsyncMemory, **scope: str) -> list[str]:
    return [line async for line in memory.export_lines(**scope)]


async def populated(memory: AsyncMemory) -> dict[str, str]:
    """A store with every kind, edges, outcomes and validations; returns some ids."""
    observed = await memory.observe_many(
        [
            "The billing service deploy key rotates every 90 days.",
            {"content": "Deploys are frozen on Fridays.", "source": "assistant", "tags": ["ops"]},
            {"content": "Alice moved the staging database to port 5433.", "metadata": {"t": 1}},
        ]
    )
    ep1, ep2, ep3 = (o.id for o in observed)
    fact = await memory.assert_fact(
        "staging database", "listens on", "port 5433", source_episode_ids=[ep3], confidence=0.7
    )
    await memory.assert_fact("staging database", "listens on", "port 5433")  # reinforced
    await memory.assert_fact("port 5433", "belongs to", "postgres")
    procedure = await memory.add_procedure(
        "Rotate the deploy key",
        "How to rotate the billing deploy key",
        steps=[{"description": "generate a key"}, {"description": "update CI"}],
        trigger_tags=["deploy"],
        status="active",
    )
    await memory.record_procedure_outcome(procedure.id, True)
    await memory.record_procedure_outcome(procedure.id, False)
    learning = await memory.learn(
        "Check the freeze calendar before deploying.",
        evidence_ids=[ep2],
        applicability=["deploy"],
        confidence=0.6,
    )
    await memory.validate_learning(learning.id, True)
    await memory.link(ep1, ep2, "precedes", weight=0.4)
    return {"ep1": ep1, "fact": fact.id, "procedure": procedure.id, "learning": learning.id}


async def test_import_of_an_export_reproduces_the_store(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "a.db", user_id="alice", embedder=local_embedder) as source:
        ids = await populated(source)
        exported = await lines_of(source)
        records = await source.list(include_archived=True)
        dump = tmp_path / "alice.jsonl"
        assert await source.export_jsonl(dump) == len(records) >= 6
        assert dump.read_text(encoding="utf-8").splitlines(keepends=True) == exported

    async with AsyncMemory(tmp_path / "b.db", user_id="alice", embedder=local_embedder) as copy:
        report = await copy.import_lines(exported)
        assert report.imported == report.records == len(records) and report.skipped == 0
        assert report.edges == sum(json.loads(x)["type"] == "edge" for x in exported) > 0
        # Same ids, fields, salience, access counts, vectors, retention and edges: the
        # export of the copy is byte for byte the export of the original.
        assert await lines_of(copy) == exported
        assert [r.id for r in await copy.list(include_archived=True)] == [r.id for r in records]
        fact = await copy.get(ids["fact"])
        assert fact.reinforcement_count >= 1 and fact.source_episode_ids
        assert [f.object for f in await copy.traverse("staging database")] == [
            "port 5433",
            "postgres",
        ]
        procedure = await copy.get(ids["procedure"])
        assert procedure.execution_count == 2
        related = await copy.related(ids["ep1"])
        assert any("Fridays" in r.content for r, _, _ in related)
        hits = await copy.remember("when is the deploy freeze", limit=3)
        assert any("Friday" in h.content for h in hits)


async def test_import_streams_in_chunks_and_resumes_after_an_interruption(tmp_path: Path) -> None:
    fake = CountingFakeEmbedder()  # the same model on both sides: nothing is re-embedded
    async with AsyncMemory(tmp_path / "a.db", user_id="alice", embedder=fake) as source:
        await source.observe_many(
            [f"Note {i}: the meeting about topic {i} went well." for i in range(1200)]
        )
        exported = await lines_of(source)
    assert sum('"type": "memory"' in line for line in exported) == 1200

    class Interrupted(Exception):
        pass

    seen: list[ImportReport] = []

    def stop_after_two_chunks(report: ImportReport) -> None:
        seen.append(report)
        if len(seen) == 2:
            raise Interrupted

    embedded = fake.texts
    async with AsyncMemory(tmp_path / "b.db", user_id="alice", embedder=fake) as copy:
        with pytest.raises(Interrupted):
            await copy.import_lines(exported, progress=stop_after_two_chunks)
        assert [r.imported for r in seen] == [exchange.CHUNK, 2 * exchange.CHUNK]
        assert (await copy.stats())["memories"]["episodic"] == 2 * exchange.CHUNK

        progress: list[ImportReport] = []
        report = await copy.import_lines(exported, progress=progress.append)
        assert report.skipped == 2 * exchange.CHUNK
        assert report.imported == 1200 - 2 * exchange.CHUNK
        assert (await copy.stats())["memories"]["episodic"] == 1200
        assert [p.records for p in progress][:3] == [500, 1000, 1200]
        assert await lines_of(copy) == exported  # nothing duplicated, nothing lost

        again = await copy.import_lines(exported)
        assert (again.imported, again.skipped) == (0, 1200)
        assert fake.texts == embedded  # vectors of the same model are used as they are


async def test_async_input_and_records_of_another_model_are_re_embedded(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "a.db", user_id="alice", embedder=local_embedder) as source:
        await populated(source)
        exported = await lines_of(source)
        count = len(await source.list(include_archived=True))

    async def stream() -> AsyncIterator[bytes]:
        for line in exported:
            yield line.encode("utf-8")

    fake = CountingFakeEmbedder()
    async with AsyncMemory(tmp_path / "b.db", user_id="alice", embedder=fake) as copy:
        report = await copy.import_lines(stream())
        assert report.imported == count
        assert fake.texts == count  # every record re-embedded with the new model, once
        header = json.loads((await lines_of(copy))[0])
        assert header["model"] == "fake-384"
        again = await copy.import_lines(stream())
        assert again.imported == 0 and fake.texts == count  # present records are not re-embedded


async def test_an_import_into_another_scope_gets_ids_of_its_own(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "a.db", user_id="alice", embedder=local_embedder) as memory:
        await populated(memory)
        exported = await lines_of(memory)
        alice_ids = {r.id for r in await memory.list(include_archived=True)}

        report = await memory.import_lines(exported, user_id="mallory")
        assert report.imported == len(alice_ids) and report.skipped == 0
        assert report.edges == sum(json.loads(x)["type"] == "edge" for x in exported)
        assert await lines_of(memory) == exported  # Alice's memory is untouched
        copies = await memory.list(include_archived=True, user_id="mallory")
        mallory = Scope("mallory")
        assert not alice_ids & {r.id for r in copies}
        own_fact_ids = {
            fact_id_for(mallory, r.subject, r.predicate, r.object)
            for r in copies
            if isinstance(r, Fact)
        }
        assert all(owned_by(r.id, mallory) or r.id in own_fact_ids for r in copies)
        # References moved with their records: sources, evidence and edges resolve.
        episodes = {r.id for r in copies if r.kind.value == "episodic"}
        sourced = [r for r in copies if isinstance(r, Fact) and r.source_episode_ids]
        assert sourced and all(set(f.source_episode_ids) <= episodes for f in sourced)
        assert all(set(r.evidence) <= episodes for r in copies if isinstance(r, Learning))
        first = next(r for r in copies if "deploy key rotates" in r.content)
        related = await memory.related(first.id, user_id="mallory")
        assert any("Fridays" in r.content for r, _, _ in related)

        again = await memory.import_lines(exported, user_id="mallory")  # resumes: same ids
        assert (again.imported, again.skipped) == (0, len(alice_ids))


def one_fact_export(fact_id: str, subject: str, predicate: str, object_: str) -> list[str]:
    """A one-record export carrying a fact under an id of the sender's choosing."""
    record = {
        "kind": "semantic",
        "id": fact_id,
        "user_id": "whoever",
        "content": f"{subject} {predicate} {object_}",
        "created_at": 1_700_000_000.0,
        "subject": subject,
        "predicate": predicate,
        "object": object_,
    }
    return [
        json.dumps({"type": "header", "format": "ucma-jsonl", "version": 1}) + "\n",
        json.dumps({"type": "memory", "record": record}) + "\n",
    ]


async def test_a_guessed_fact_id_is_neither_probed_nor_claimed(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "a.db", user_id="alice", embedder=local_embedder) as memory:
        held = await memory.assert_fact("alice", "lives in", "Lisbon")
        alice = Scope("alice")
        free_id = fact_id_for(alice, "alice", "works at", "Acme")
        assert held.id == fact_id_for(alice, "alice", "lives in", "Lisbon")

        # Mallory sends Alice's computed ids: one Alice holds, one she does not (yet).
        reports = [
            await memory.import_lines(one_fact_export(guess, *triple), user_id="mallory")
            for guess, triple in (
                (held.id, ("alice", "lives in", "Lisbon")),
                (free_id, ("alice", "works at", "Acme")),
            )
        ]
        assert reports[0] == reports[1]  # the same answer whether or not Alice holds it
        assert reports[0].imported == 1
        for memory_id in (held.id, free_id):
            with pytest.raises(NotFoundError):
                await memory.get(memory_id, user_id="mallory")
        assert all(owned_by(r.id, Scope("mallory")) for r in await memory.list(user_id="mallory"))

        # Alice's next assert of that triple gets its own id, and her sleep cycle runs.
        fact = await memory.assert_fact("alice", "works at", "Acme")
        assert fact.id == free_id
        assert (await memory.get(free_id)).content == "alice works at Acme"
        report = await memory.sleep()
        assert report.phases and not report.interrupted
        assert {r.user_id for r in await memory.sleep_all()} == {"alice", "mallory"}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], "empty input"),
        (['{"type": "memory"}\n'], "header"),
        (['{"type": "header", "format": "ucma-jsonl", "version": 9}\n'], "version"),
        (
            ['{"type": "header", "format": "ucma-jsonl", "version": 1}\n', "not json\n"],
            ":2: invalid JSON",
        ),
        (['{"type": "header", "format": "ucma-jsonl", "version": 1}\n', "[1]\n"], "JSON object"),
        (
            ['{"type": "header", "format": "ucma-jsonl", "version": 1}\n', '{"type": "x"}\n'],
            "unknown line type",
        ),
        (
            [
                '{"type": "header", "format": "ucma-jsonl", "version": 1}\n',
                '{"type": "memory", "record": {"kind": "nope"}}\n',
            ],
            "kind",
        ),
        (
            [
                '{"type": "header", "format": "ucma-jsonl", "version": 1}\n',
                '{"type": "edge", "source_id": 1}\n',
            ],
            "edge",
        ),
        (['{"type": "header", "format": "ucma-jsonl", "version": 1}\n', b"\xff\xfe\n"], "UTF-8"),
    ],
)
async def test_bad_input_names_the_line(
    memory: AsyncMemory, lines: list[str | bytes], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        await memory.import_lines(lines, source="dump.jsonl")


HEADER = '{"type": "header", "format": "ucma-jsonl", "version": 1}\n'


@pytest.mark.parametrize("levels", [1_000, 400_000])
async def test_a_deeply_nested_line_is_refused_before_it_is_parsed(
    memory: AsyncMemory, levels: int
) -> None:
    for line in ("[" * levels + "]" * levels, '{"type": "memory", "record": ' + "{" * levels):
        with pytest.raises(InputLimitError, match=r"dump.jsonl:2: the line nests \d+ levels"):
            await memory.import_lines([HEADER, line + "\n"], source="dump.jsonl")


async def test_blank_lines_and_line_counts_are_bounded(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    limits = LimitsConfig(max_import_lines=5, max_blank_lines=2, max_import_line_bytes=1_000)
    config = UCMAConfig(limits=limits)
    async with AsyncMemory(
        tmp_path / "m.db", user_id="alice", embedder=local_embedder, config=config
    ) as memory:
        # 10 MB of blank lines: refused at the third, without reading the rest.
        consumed = 0

        def blanks() -> Iterator[bytes]:
            nonlocal consumed
            yield HEADER.encode()
            for _ in range(10_000_000):
                consumed += 1
                yield b"\n"

        with pytest.raises(InputLimitError, match="more than 2 blank lines") as caught:
            await memory.import_lines(blanks())
        assert caught.value.limit == "max_blank_lines" and consumed == 3

        with pytest.raises(InputLimitError, match="more than 5 lines"):
            edge = '{"type": "edge", "source_id": "a", "target_id": "b", "edge_type": "x"}\n'
            await memory.import_lines([HEADER] + [edge] * 9)

        dump = tmp_path / "long.jsonl"
        dump.write_text(HEADER + '{"type": "memory", "x": "' + "y" * 50_000 + '"}\n')
        with pytest.raises(InputLimitError, match="long.jsonl:2: a line is longer than 1000"):
            await memory.import_jsonl(dump)
        assert (await memory.stats())["memories"]["episodic"] == 0

        # What import refuses is refused on the write path too: metadata nests at most
        # max_json_depth - 8 levels, so every stored record can be exported and imported.
        deep: dict[str, object] = {}
        for _ in range(60):
            deep = {"a": deep}
        with pytest.raises(InputLimitError, match="metadata nests"):
            await memory.observe("Deeply nested metadata is refused.", metadata=deep)
