"""Recall as a new user meets it (issue 12): small observe-only stores, meaning before
names, confidence that abstains, chit-chat and stale or unimportant memories kept out."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from ucma.config import CascadeConfig, EmbeddingConfig, RetrievalConfig, UCMAConfig
from ucma.embeddings import Embedder, LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

DAY = 86_400.0


async def _readme_store(memory: AsyncMemory) -> dict[str, str]:
    texts = [
        "Alice prefers dark mode in every editor.",
        "Alice uses a split keyboard at work.",
        "Alice has a cat named Miso.",
    ]
    return {text: (await memory.observe(text)).id for text in texts}


async def test_the_readme_example_ranks_the_theme_first(memory: AsyncMemory):
    ids = await _readme_store(memory)
    result = await memory.recall("which theme does Alice like?")
    assert result.hits[0].id == ids["Alice prefers dark mode in every editor."]
    assert not result.low_confidence
    hits = await memory.remember("which theme does Alice like?", limit=3)
    assert hits[0].id == ids["Alice prefers dark mode in every editor."]


async def test_a_name_narrows_but_does_not_outrank_meaning(memory: AsyncMemory):
    ids = await _readme_store(memory)
    await memory.assert_fact("Alice", "lives_in", "Lisbon")
    result = await memory.recall("which theme does Alice like?")
    assert result.hits[0].id == ids["Alice prefers dark mode in every editor."]


async def test_what_was_said_outranks_facts_that_only_share_the_name(memory: AsyncMemory):
    allergy = await memory.observe("I am allergic to peanuts.", source="Dana")
    await memory.observe("I had a long week at the office.", source="Dana")
    await memory.assert_fact("Dana", "lives_in", "Denver")
    await memory.assert_fact("Dana", "works_at", "Globex")
    result = await memory.recall("What food restrictions does Dana have?")
    assert result.hits[0].id == allergy.id


async def test_a_planning_question_searches_what_was_observed(memory: AsyncMemory):
    said = await memory.observe("Dana prefers meetings in the morning, before 11.")
    await memory.observe("The quarterly report is due at the end of the month.")
    result = await memory.recall("When should I schedule a meeting with Dana?")
    assert result.query_class == "planning"
    # The episode, or the fact drawn from it that restates it, comes first.
    top = result.hits[0]
    assert top.id == said.id or said.id in getattr(top.memory, "source_episode_ids", [])
    assert "morning" in top.content


async def test_an_unrelated_question_is_low_confidence_however_fresh_the_store(
    memory: AsyncMemory,
):
    await _readme_store(memory)
    result = await memory.recall("What is the capital of Mongolia?")
    assert result.low_confidence
    assert result.confidence < 0.3
    assert all(h.confidence.level == "low" for h in result.hits)
    answerable = await memory.recall("Does Alice have any pets?")
    assert not answerable.low_confidence
    assert answerable.confidence > result.confidence + 0.3


async def test_a_question_about_someone_never_mentioned_is_low_confidence(memory: AsyncMemory):
    # Every word but the name matches; no memory says anything about Ingrid.
    await memory.observe("Rafael has pottery every Wednesday.")
    await memory.observe("Had lunch with Kofi near the river.")
    stranger = await memory.recall("When in the week is Ingrid's pottery?")
    assert stranger.low_confidence
    known = await memory.recall("When in the week is Rafael's pottery?")
    assert not known.low_confidence
    assert known.hits[0].content == "Rafael has pottery every Wednesday."


async def test_a_line_about_someone_else_does_not_answer_for_a_person_only_mentioned(
    memory: AsyncMemory,
):
    # Kofi is mentioned (not a speaker the scope knows): a line that does not
    # mention him is off the question's subject, as for a known participant.
    await memory.observe("Rafael has pottery every Wednesday.")
    await memory.observe("Kofi and I finally finished Glass Orchard.")
    about_kofi = await memory.recall("When in the week is Kofi's pottery?")
    about_rafael = await memory.recall("When in the week is Rafael's pottery?")
    assert about_rafael.hits[0].confidence.level == "high"
    assert about_kofi.hits[0].confidence.level != "high"
    assert about_kofi.confidence < about_rafael.confidence - 0.15


async def test_a_date_about_whom_a_when_question_asks_makes_it_answerable(
    memory: AsyncMemory,
):
    # The embedder reads no birthday in "many happy returns"; the date said of the
    # person asked about is what answers a question asking when.
    birthday = await memory.observe("My cousin Dana's birthday is on January 9.")
    await memory.observe("My cousin Dana follows a vegan diet.")
    await memory.observe("Had lunch with Omar near the river.")
    when = await memory.recall("When should I wish my cousin Dana many happy returns?")
    assert when.hits[0].id == birthday.id
    assert not when.low_confidence
    # A date holds no height, and a date of someone else answers nothing about Omar.
    assert (await memory.recall("How tall is my cousin Dana?")).low_confidence
    assert (await memory.recall("When should I wish Omar many happy returns?")).low_confidence


async def test_a_reminder_about_someone_else_does_not_answer_for_the_asker(
    memory: AsyncMemory,
):
    await memory.observe("Don't let me forget my best friend Priya's birthday, October 23.")
    await memory.observe("I live in Tucson.")
    mine = await memory.recall("What date do I celebrate turning a year older?")
    assert mine.low_confidence
    hers = await memory.recall(
        "What date does my best friend Priya celebrate turning a year older?"
    )
    assert not hers.low_confidence


async def test_a_question_about_the_asker_in_other_words_is_answered(memory: AsyncMemory):
    # The question shares no word with the line that answers it (cosine about 0.3).
    for line in [
        "I've been based in Auckland since uni.",
        "My dog Waffles knocked over my mug again.",
        "I always get a flat white with oat milk in the morning.",
        "Had lunch with Kofi near the river.",
    ]:
        await memory.observe(line)
    home = await memory.recall("What town do I reside in?")
    assert home.hits[0].content == "I've been based in Auckland since uni."
    assert not home.low_confidence
    assert (await memory.recall("What's my blood type?")).low_confidence


async def test_nonsense_finds_nothing(memory: AsyncMemory):
    await _readme_store(memory)
    assert await memory.remember("zxqv blorf wuggle") == []


async def test_chit_chat_is_not_stored_and_never_answers(memory: AsyncMemory):
    await _readme_store(memory)
    for text in ("ok thanks", "lol", "Sounds good!", "haha nice"):
        observed = await memory.observe(text)
        assert not observed.stored
    result = await memory.recall("ok thanks")
    assert all(h.content not in ("ok thanks", "lol") for h in result.hits)


async def test_expired_and_superseded_facts_are_not_presented_as_current(
    memory: AsyncMemory,
):
    now = memory._clock()  # noqa: SLF001 - the engine's own clock, as recall reads it
    expired = await memory.assert_fact(
        "Dana", "has_role", "interim team lead", valid_until=now - DAY
    )
    hits = await memory.remember("What is Dana's role as team lead?")
    assert expired.id not in [h.id for h in hits]
    history = await memory.remember("What is Dana's role as team lead?", include_superseded=True)
    assert expired.id in [h.id for h in history]


async def test_a_memory_at_salience_zero_does_not_rank(memory: AsyncMemory):
    bad = await memory.observe("Deploy on Fridays after the standup, it always goes fine.")
    good = await memory.observe("Deploy on Tuesdays: Fridays leave nobody to fix failures.")
    for _ in range(8):
        trace = await memory.decide([bad.id], summary="deployed on a Friday")
        await memory.outcome(trace.id, -1.0, "user_rejected")
    record = await memory.get(bad.id)
    assert record.effective_salience < 0.05
    hits = await memory.remember("which day should we deploy?")
    assert [h.id for h in hits] == [good.id]


async def test_what_is_asked_about_a_person_outranks_lines_that_only_name_them(
    memory: AsyncMemory,
):
    # A shared name lifts MiniLM's cosine whatever else two texts say: compared
    # with the name as well as without it, the allergy leads.
    for text in (
        "Had lunch with my landlord Sofia near the harbour wall.",
        "Went for a walk along the harbour wall with my landlord Sofia.",
        "My landlord Sofia's dog is named Clementine.",
    ):
        await memory.observe(text)
    allergy = await memory.observe("Sofia is allergic to bee stings.")
    result = await memory.recall("What gives my landlord Sofia a bad reaction?")
    assert result.hits[0].id == allergy.id


class _Counting(Embedder):
    """The packaged model, counting the texts it is given."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.texts: list[str] = []

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return await self.inner.embed(texts)


async def test_memories_read_without_a_name_are_embedded_once(
    tmp_path: Path, local_embedder: LocalEmbedder
):
    # No query caches: only the derived vectors of memories are kept.
    config = UCMAConfig(embedding=EmbeddingConfig(lru_size=0, persistent_cache=False))
    counting = _Counting(local_embedder)
    async with AsyncMemory(
        tmp_path / "m.db", user_id="u", embedder=counting, config=config
    ) as memory:
        for text in (
            "Had lunch with my landlord Sofia near the harbour wall.",
            "My landlord Sofia's dog is named Clementine.",
            "Sofia is allergic to bee stings.",
        ):
            await memory.observe(text)
        first = await memory.recall("What gives my landlord Sofia a bad reaction?")
        asked = len(counting.texts)
        second = await memory.recall("What gives my landlord Sofia a bad reaction?")
        again = counting.texts[asked:]
    assert [h.id for h in second.hits] == [h.id for h in first.hits]
    # The query twice (with and without the name), no memory again.
    assert len(again) == 2
    assert not any("Clementine" in text or "bee stings" in text for text in again)


async def test_memories_read_without_a_name_are_embedded_when_observed_and_kept(
    tmp_path: Path, local_embedder: LocalEmbedder
):
    # Observed in one process, asked in others (a restarted service): the memories'
    # name-free vectors were made by observe, or by the first recall that needed
    # them, and come from the persistent cache.
    texts = (
        "Had lunch with my landlord Sofia Marsh near the harbour wall.",
        "My landlord Sofia's dog is named Clementine.",
        "Sofia Marsh is allergic to bee stings.",
    )
    async with AsyncMemory(tmp_path / "m.db", user_id="u", embedder=local_embedder) as memory:
        for text in texts:
            await memory.observe(text)

    async def ask(question: str) -> tuple[list[str], dict[str, int]]:
        counting = _Counting(local_embedder)
        async with AsyncMemory(tmp_path / "m.db", user_id="u", embedder=counting) as memory:
            assert (await memory.recall(question)).hits
            return counting.texts, memory.process_stats()["derived_cache"]

    # Named as the memories name her: nothing but the question (with and without her).
    embedded, derived = await ask("What gives Sofia Marsh a bad reaction?")
    assert len(embedded) == 2 and "What gives Sofia Marsh a bad reaction?" in embedded
    assert derived["computed"] == 0 and derived["store_hits"] >= 3
    # By first name only: "Sofia Marsh" reads "they Marsh", embedded once, then kept.
    embedded, derived = await ask("What is Sofia's dog called?")
    assert derived["computed"] > 0
    embedded, derived = await ask("What is Sofia's dog called?")
    assert not embedded and derived["computed"] == 0  # the question's vectors are kept too


async def test_a_first_name_is_compared_without_it_like_the_full_name(memory: AsyncMemory):
    # "My old roommate Chris" shares "Chris" with a question about Chris Tanaka;
    # the name alone must not make an unrelated line look like an answer.
    for text in (
        "Had lunch with Chris Tanaka near the old canal.",
        "Chris Tanaka runs 5 km most days.",
        "My old roommate Chris went from 10 km to 8 km on daily runs.",
    ):
        await memory.observe(text)
    result = await memory.recall("What is Chris Tanaka's middle name?")
    assert result.low_confidence
    assert all(h.confidence.level == "low" for h in result.hits if h.confidence)


async def test_what_a_speaker_says_about_their_listener_does_not_answer_for_the_speaker(
    memory: AsyncMemory,
):
    # Caroline ran the race; Melanie only congratulates her. Asked about Melanie's
    # race, Melanie's line is about whom she spoke to: less confident than the
    # same question asked about Caroline.
    await memory.observe(
        "I ran a charity race for mental health last Saturday, it made me "
        "realise how much self-care matters.",
        source="Caroline",
    )
    await memory.observe(
        "That charity race sounds great, Caroline! You're amazing, you should be proud.",
        source="Melanie",
    )
    right = await memory.recall("What did Caroline realise after her charity race?")
    wrong = await memory.recall("What did Melanie realise after her charity race?")
    assert right.hits[0].memory.source == "Caroline"
    assert wrong.confidence < right.confidence


async def test_a_question_about_the_asker_prefers_lines_about_them(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    mine = "Put on some synthwave and I'm happy."
    theirs = "My flatmate Sofia listens to baroque nonstop."

    async def top(factor: float, question: str) -> str:
        config = UCMAConfig(
            retrieval=dataclasses.replace(RetrievalConfig(), other_person_factor=factor)
        )
        async with AsyncMemory(db_path, user_id="u", embedder=local_embedder, config=config) as m:
            return (await m.recall(question)).hits[0].content

    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        for line in [theirs, mine, "My best friend Nadia always orders a flat white."]:
            await mem.observe(line)
    assert await top(0.7, "What genre should you queue up for me?") == mine
    # By match alone, the other person's line leads; it still answers about them.
    assert await top(1.0, "What genre should you queue up for me?") == theirs
    assert await top(0.7, "What genre does my flatmate Sofia like?") == theirs


async def test_a_person_named_without_a_relation_is_known_from_another_line(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """ "Tomás always orders a chai latte" alone could start with a product's name;
    "my teammate Tomás" in another memory says he is a person, so for a question
    about the asker the line is about someone else (``other_person_factor``)."""
    chai = "Tomás always orders a chai latte."

    async def score(factor: float) -> float:
        config = UCMAConfig(
            retrieval=dataclasses.replace(RetrievalConfig(), other_person_factor=factor)
        )
        async with AsyncMemory(db_path, user_id="u", embedder=local_embedder, config=config) as m:
            found = await m.recall("What should you order for me at the café?")
            assert "cold brew" in found.hits[0].content
            return next(h.score for h in found.hits if h.content == chai)

    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        for line in [
            "My teammate Tomás's favourite cuisine is Georgian.",
            chai,
            "My dog Pumpkin knocked over my mug again. Also: My usual coffee order is a cold brew.",
        ]:
            await mem.observe(line)
    assert await score(0.7) < await score(1.0)


async def test_a_question_naming_someone_prefers_lines_that_mention_them(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    bruno = "Update: Bruno always picks Ethiopian when we eat out."
    felix = "My teammate Felix went vegan recently."
    question = "Which eating style does my teammate Felix stick to?"

    async def top(factor: float) -> str:
        config = UCMAConfig(
            retrieval=dataclasses.replace(RetrievalConfig(), unmentioned_factor=factor)
        )
        async with AsyncMemory(db_path, user_id="u", embedder=local_embedder, config=config) as m:
            return (await m.recall(question)).hits[0].content

    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        for line in [felix, "Had lunch with Felix near the old canal.", bruno]:
            await mem.observe(line)
        await mem.observe("My teammate Felix always orders a cold brew.")
    assert "Felix" in await top(RetrievalConfig().unmentioned_factor)
    # By match alone the line about Bruno leads: it shares "eat" with the question.
    assert await top(1.0) == bruno


async def test_a_later_change_goes_above_the_value_it_changes(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    old = "Flamenco is my favourite music."
    new = "These days it's all baroque on my playlists."
    question = "What kind of songs do I enjoy most?"

    async def top(window: int) -> list[str]:
        config = UCMAConfig(retrieval=dataclasses.replace(RetrievalConfig(), changes_window=window))
        async with AsyncMemory(db_path, user_id="u", embedder=local_embedder, config=config) as m:
            result = await m.recall(question)
            scores = [hit.score for hit in result.hits]
            assert scores == sorted(scores, reverse=True)
            return [hit.content for hit in result.hits[:2]]

    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        await mem.observe(old, timestamp=1_700_000_000.0)
        await mem.observe("I run 8 km most days.", timestamp=1_700_300_000.0)
        await mem.observe(new, timestamp=1_700_600_000.0)
    assert await top(3) == [new, old]
    # By match alone the old favourite leads.
    assert await top(0) == [old, new]


async def test_a_later_change_about_someone_else_stays_below(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    mine = "Flamenco is my favourite music."
    # A wide margin, so that only whom the two are about keeps the order.
    config = UCMAConfig(retrieval=dataclasses.replace(RetrievalConfig(), changes_margin=0.2))
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder, config=config) as mem:
        await mem.observe(mine, timestamp=1_700_000_000.0)
        await mem.observe(
            "These days my flatmate Sofia's favourite music is baroque.", timestamp=1_700_600_000.0
        )
        result = await mem.recall("What kind of songs do I enjoy most?")
    assert result.hits[0].content == mine


async def test_an_old_value_a_later_change_replaces_for_the_question_leaves_the_top(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    old = "Rafael is an Auckland local."
    new = "As of May: Rafael lives in Lisbon."
    question = "In what city does Rafael reside?"
    others = [
        "As far as I know my neighbour Rafael is married.",
        "Rafael eats strictly gluten-free.",
        "Rafael runs 10 km most days.",
        "Rafael's dog is named Pretzel.",
        "Had lunch with Rafael near the river.",
        "Rafael works at Meridian Pharma.",
    ]

    async def ranked(window: int) -> list[str]:
        config = UCMAConfig(
            retrieval=dataclasses.replace(RetrievalConfig(), changes_demote_window=window)
        )
        async with AsyncMemory(db_path, user_id="u", embedder=local_embedder, config=config) as m:
            result = await m.recall(question)
            scores = [hit.score for hit in result.hits]
            assert scores == sorted(scores, reverse=True)
            return [hit.content for hit in result.hits]

    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        await mem.observe(old, timestamp=1_700_000_000.0)
        for i, text in enumerate(others):
            await mem.observe(text, timestamp=1_700_100_000.0 + i * 1000)
        await mem.observe(new, timestamp=1_700_600_000.0)
    # Nothing in the words says the two are one attribute (supersession at observe
    # time keeps both); the question does.
    kept = await ranked(0)
    assert kept[0] == new
    assert old in kept[:5]
    demoted = await ranked(5)
    assert demoted[0] == new
    assert old in demoted
    assert old not in demoted[:5]


async def test_a_question_about_how_someone_is_prefers_a_statement_to_an_outing(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    question = "What should I keep in mind when cooking for Lucas?"
    diet = "My flatmate Lucas follows a pescatarian diet."
    lunch = "Had lunch with Lucas near the botanical garden."

    async def first(factor: float) -> str:
        config = UCMAConfig(retrieval=dataclasses.replace(RetrievalConfig(), event_factor=factor))
        async with AsyncMemory(db_path, user_id="u", embedder=local_embedder, config=config) as m:
            return (await m.recall(question)).hits[0].content

    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        await mem.observe(diet, timestamp=1_700_000_000.0)
        await mem.observe("My flatmate Lucas is really into bluegrass.", timestamp=1_700_100_000.0)
        await mem.observe(lunch, timestamp=1_700_200_000.0)
    # By match alone the lunch leads; the question asks how Lucas is.
    assert await first(1.0) == lunch
    assert await first(0.9) == diet
    # Asked what happened, the outing is what answers.
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        result = await mem.recall("Where did I have lunch with Lucas?")
    assert result.hits[0].content == lunch


async def test_a_question_asking_for_a_quantity_is_unsure_of_lines_holding_none(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """ "How old is Rafael?" is not answered by a line with no number in it, however
    close its words; "How far does Greta jog?" is by one with a distance."""

    def config(factor: float) -> UCMAConfig:
        return UCMAConfig(cascade=dataclasses.replace(CascadeConfig(), missing_kind_factor=factor))

    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        for text in (
            "Had lunch with Rafael near the river.",
            "Rafael has pottery every Wednesday.",
            "My coworker Rafael is really into jazz.",
            "My landlord Greta runs 5 km most mornings.",
        ):
            await mem.observe(text)
    async with AsyncMemory(
        db_path, user_id="u", embedder=local_embedder, config=config(1.0)
    ) as mem:
        assert not (await mem.recall("How old is Rafael?")).low_confidence
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        assert (await mem.recall("How old is Rafael?")).low_confidence
        jog = await mem.recall("How far does Greta jog?")
        assert not jog.low_confidence
        assert jog.hits[0].content == "My landlord Greta runs 5 km most mornings."


async def test_a_line_about_someone_else_does_not_answer_for_the_asker(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """ "How far do I run?" is not answered by what the user said of their boss."""
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        await mem.observe("My flatmate Sofia always orders a cortado.")
        await mem.observe("My boss Aisha runs 21 km most days.")
        mine = await mem.recall("How far do I run?")
        assert mine.hits[0].content == "My boss Aisha runs 21 km most days."
        assert mine.low_confidence
        hers = await mem.recall("How far does Aisha run?")
        assert not hers.low_confidence


def test_event_factor_above_one_is_refused() -> None:
    with pytest.raises(ConfigError):
        RetrievalConfig(event_factor=1.5)


@pytest.mark.parametrize("field", ["lru_size", "derived_lru_size"])
def test_a_negative_cache_size_is_refused(field: str) -> None:
    with pytest.raises(ConfigError):
        EmbeddingConfig(**{field: -1})


@pytest.mark.parametrize("factor", [0.0, 1.2])
def test_a_missing_kind_factor_outside_its_range_is_refused(factor: float) -> None:
    with pytest.raises(ConfigError):
        CascadeConfig(missing_kind_factor=factor)


async def test_a_later_value_said_without_a_cue_comes_first_when_the_query_cannot_tell(
    memory: AsyncMemory,
):
    # Two statements of the day the speaker does yoga, weeks apart, both answering
    # the question about as well: the later one is the current value.
    now = memory._clock()  # noqa: SLF001 - the engine's own clock, as recall reads it
    old = await memory.observe("My yoga class is on Fridays.", timestamp=now - 30 * DAY)
    await memory.observe("I run 12 km every morning.", timestamp=now - 20 * DAY)
    new = await memory.observe("Wednesday evenings are for yoga.", timestamp=now - 2 * DAY)
    result = await memory.recall("Which day of the week is my yoga?")
    ids = [h.id for h in result.hits]
    assert ids[0] == new.id
    assert ids.index(old.id) > ids.index(new.id)


async def test_a_request_does_not_answer_a_question_about_how_the_asker_is(memory: AsyncMemory):
    # "birthday" matches the question better than "born on": a request says
    # nothing of the asker, the statement does.
    born = await memory.observe("I was born on August 17.")
    await memory.observe("Remind me to buy a birthday card this weekend.")
    await memory.observe("My usual run is 5 km.")
    result = await memory.recall("What date do I celebrate turning a year older?")
    assert result.hits[0].id == born.id


async def test_what_the_user_asks_of_the_assistant_does_not_answer_how_they_are(
    memory: AsyncMemory,
):
    # "plan" and "way" match the question better than "gone gluten-free"; the
    # user's question and plan say nothing of how they eat.
    now = memory._clock()  # noqa: SLF001 - the engine's own clock, as recall reads it
    texts = (
        "I eat vegetarian, so keep that in mind when you suggest recipes.",
        "What's a good way to book the dentist quickly?",
        "I'm no longer vegetarian, I've gone gluten-free.",
        "I think I'll book the dentist after dinner.",
    )
    ids = [
        (await memory.observe(text, timestamp=now - (4 - i) * 3 * DAY)).id
        for i, text in enumerate(texts)
    ]
    result = await memory.recall("What kind of eating plan do I stick to?")
    assert result.hits[0].id == ids[2]


async def test_two_lines_on_one_value_keep_the_order_meaning_gives(memory: AsyncMemory):
    # "statistics" in both: two things about one subject, not two values of one.
    now = memory._clock()  # noqa: SLF001 - the engine's own clock, as recall reads it
    major = await memory.observe("My brother Ian majored in statistics.", timestamp=now - 30 * DAY)
    await memory.observe("My brother Ian took a night class in statistics.", timestamp=now - DAY)
    result = await memory.recall("What did Ian major in?")
    assert result.hits[0].id == major.id


async def test_an_answer_about_one_person_leaves_out_another_of_the_same_name(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        await mem.observe("My best friend Maya likes dark mode on all devices.")
        await mem.observe("Maya Tanaka likes high-contrast mode on all devices.")
        answer = await mem.answer("What screen appearance does my best friend Maya like?")
        assert "dark mode" in answer.response
        assert "high-contrast" not in answer.response


async def test_a_question_about_my_relative_is_answered_from_the_line_naming_them(
    memory: AsyncMemory,
) -> None:
    """ "my sister" asks about the sister, not the asker, and "My sister Ines ..." is
    about her: the answer quotes that line, not the asker's own job at the city
    hospital."""
    for line in [
        "I work as a nurse at the city hospital.",
        "My sister Ines moved to Lisbon last year.",
        "I had a long day at work.",
    ]:
        await memory.observe(line)
    question = "Which city is my sister based in?"
    assert (await memory.recall(question)).hits[0].content.startswith("My sister Ines")
    response = (await memory.answer(question)).response
    assert "Lisbon" in response
    assert "nurse" not in response


async def test_a_question_starting_with_a_verb_names_the_person_after_it(
    memory: AsyncMemory,
) -> None:
    """ "Is Joost allergic to anything?" names Joost, not a person called "Is Joost"
    whom no memory is about, so the answer quotes the line about him."""
    for line in [
        "My partner Joost is a vet and he's allergic to cats, ironically.",
        "I'm vegetarian, but I eat fish occasionally.",
        "I finally sold the Golf and bought a cargo bike.",
    ]:
        await memory.observe(line)
    answer = await memory.answer("Is Joost allergic to anything?")
    assert "allergic to cats" in answer.response
