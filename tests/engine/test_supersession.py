"""Supersession from what is observed (issue 12): changes read at observe time replace
old values, keep them as history, and ask the user only when it is really ambiguous."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.types import ConflictStatus, FactStatus, ResolutionStrategy

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

MINUTE = 60.0
DAY = 86_400.0


def at(day: int, month: int = 3, year: int = 2025) -> float:
    return datetime(year, month, day, 9, tzinfo=UTC).timestamp()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def open_memory(path: Path, embedder: LocalEmbedder, clock: Callable[[], float]) -> AsyncMemory:
    return AsyncMemory(path, user_id="dana", embedder=embedder, clock=clock)


async def superseded(mem: AsyncMemory, ids: list[str]) -> dict[str, str]:
    storage = await mem._ready()
    return await mem._run(storage.conflicts.superseded, mem._scope(None, None), ids, at=mem.clock())


async def test_a_stated_job_change_supersedes_the_old_employer(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        old = await mem.observe("Uma works at OpenAI.")
        clock.now += 2 * DAY
        new = await mem.observe("Uma now works at Google as of 2026.")
        history = await mem.fact_history("Uma", "works_at")
        assert [(f.object, f.status) for f in history] == [
            ("OpenAI", FactStatus.SUPERSEDED),
            ("Google", FactStatus.ACTIVE),
        ]
        assert history[0].superseded_by == history[1].id
        assert [f.object for f in await mem.facts_about("Uma")] == ["Google"]
        [conflict] = await mem.conflicts(subject="Uma")
        assert conflict.status is ConflictStatus.RESOLVED
        assert conflict.resolution_strategy is ResolutionStrategy.KEEP_NEWEST
        assert await superseded(mem, [old.id, new.id]) == {old.id: new.id}
        # The old value stays as history: what memory believed before the change.
        believed = await mem.facts_about("Uma", as_of=at(2))
        assert [f.object for f in believed] == ["OpenAI"]
        # Sleep does not bring the old value back.
        await mem.sleep()
        assert [f.object for f in await mem.facts_about("Uma")] == ["Google"]
        assert await superseded(mem, [old.id]) == {old.id: new.id}


async def test_a_drift_of_three_employers_leaves_the_newest_current(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        first = await mem.observe("Theo works at Initech.")
        clock.now += 40 * DAY
        second = await mem.observe("Theo joined Globex.")
        clock.now += 40 * DAY
        third = await mem.observe("Theo has moved on and now works for Umbrella Labs.")
        history = await mem.fact_history("Theo", "works_at")
        assert [(f.object, f.is_current) for f in history] == [
            ("Initech", False),
            ("Globex", False),
            ("Umbrella Labs", True),
        ]
        gone = await superseded(mem, [first.id, second.id, third.id])
        assert gone == {first.id: second.id, second.id: third.id}


async def test_a_job_change_with_a_role_makes_one_supersession(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.observe("Priya works at Acme Robotics as a firmware engineer.")
        clock.now += 5 * MINUTE
        await mem.observe("Priya quit Acme Robotics and joined Contoso as a staff engineer.")
        history = await mem.fact_history("Priya", "works_at")
        assert [(f.object, f.status) for f in history] == [
            ("Acme Robotics", FactStatus.SUPERSEDED),
            ("Contoso", FactStatus.ACTIVE),
        ]
        assert len(await mem.conflicts(subject="Priya")) == 1


async def test_a_later_assertion_from_the_same_source_supersedes_without_asking(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        boston = await mem.assert_fact("Dana", "lives_in", "Boston")
        clock.now += 3 * MINUTE
        result = await mem.assert_fact_detailed("Dana", "lives_in", "Denver")
        assert not result.disambiguation_required
        [conflict] = result.conflicts
        assert (conflict.chosen_value, conflict.status) == ("Denver", ConflictStatus.RESOLVED)
        assert [f.object for f in await mem.facts_about("Dana")] == ["Denver"]
        assert await superseded(mem, [boston.id]) == {boston.id: result.fact.id}


async def test_only_real_ambiguity_asks_the_user(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.assert_fact("Dana", "lives_in", "Boston", metadata={"source": "crm"})
        clock.now += 3 * MINUTE
        result = await mem.assert_fact_detailed(
            "Dana", "lives_in", "Denver", metadata={"source": "email"}
        )
        assert result.disambiguation_required
        assert {f.status for f in await mem.facts_about("Dana")} == {FactStatus.DISPUTED}


async def test_a_compound_statement_is_only_partly_stale(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        both = await mem.observe("Dana lives in Boston and works at Acme.")
        clock.now += DAY
        moved = await mem.observe("Dana moved to Denver.")
        facts = {f.predicate: f.object for f in await mem.facts_about("Dana")}
        assert facts == {"lives_in": "Denver", "works_at": "Acme"}
        assert await superseded(mem, [both.id, moved.id]) == {}
        clock.now += DAY
        joined = await mem.observe("Dana joined Globex.")
        assert await superseded(mem, [both.id]) == {both.id: joined.id}


async def test_no_longer_retracts_a_multi_valued_fact(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        likes = await mem.observe("Dana likes coffee.")
        await mem.observe("Dana likes jazz.")
        clock.now += DAY
        stopped = await mem.observe("Dana no longer likes coffee.")
        current = {f.object for f in await mem.facts_about("Dana")}
        assert current == {"jazz"}
        [coffee] = [f for f in await mem.fact_history("Dana", "likes") if f.object == "coffee"]
        assert coffee.superseded_by == stopped.id and coffee.valid_until == clock.now
        assert await superseded(mem, [likes.id]) == {likes.id: stopped.id}


async def test_an_expired_fact_is_reported_superseded_and_never_a_rival(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        promo = await mem.assert_fact(
            "Shop", "status", "on sale", valid_from=at(1), valid_until=at(5)
        )
        assert await superseded(mem, [promo.id]) == {}
        clock.now = at(10)
        assert await superseded(mem, [promo.id]) == {promo.id: ""}
        result = await mem.assert_fact_detailed("Shop", "status", "full price", confidence=0.7)
        assert result.conflicts == [] and result.fact.status is FactStatus.ACTIVE
        # Current beliefs hold now; the history still has the expired one.
        assert [f.object for f in await mem.facts_about("Shop")] == ["full price"]
        history = await mem.facts_about("Shop", include_history=True)
        assert {f.object for f in history} == {"on sale", "full price"}


async def test_possessives_and_first_names_resolve_to_the_known_person(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.observe("Dana Whitfield lives in Boston.")
        clock.now += DAY
        await mem.observe("Dana's birthday is on March 14.")
        await mem.observe("Dana moved to Denver.")
        facts = {
            (f.subject, f.predicate, f.object) for f in await mem.facts_about("Dana Whitfield")
        }
        assert facts == {
            ("Dana Whitfield", "birthday", "March 14"),
            ("Dana Whitfield", "lives_in", "Denver"),
        }
        assert await mem.facts_about("Dana") == []
        # A second Dana makes a bare "Dana" ambiguous: it stays as written.
        await mem.observe("Dana Scully works at the FBI.")
        await mem.observe("Dana is allergic to peanuts.")
        assert [f.subject for f in await mem.facts_about("Dana")] == ["Dana"]


async def test_a_change_nothing_can_be_read_from_replaces_the_one_statement_it_revises(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        windows = await mem.observe("I use Windows on my laptop.", source="Bob")
        gym = await mem.observe("I go to the gym on Mondays.", source="Bob")
        clock.now += DAY
        linux = await mem.observe("I switched my laptop to Linux.", source="Bob")
        assert await superseded(mem, [windows.id, gym.id, linux.id]) == {windows.id: linux.id}
        # Another speaker's change replaces nothing of Bob's.
        await mem.observe("I go to the gym on Tuesdays now.", source="Eve")
        assert gym.id not in await superseded(mem, [gym.id])


async def test_facts_read_from_a_replaced_statement_end_with_it(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.observe("My phone is an iPhone 15.")
        [phone] = await mem.facts_about("user")
        assert phone.object == "iPhone 15"
        clock.now += 3 * DAY
        switch = await mem.observe("Switched from the iPhone 15 to a OnePlus 11.")
        assert all(f.object != "iPhone 15" for f in await mem.facts_about("user"))
        [old] = [f for f in await mem.fact_history("user", "phone") if f.id == phone.id]
        assert old.status is FactStatus.SUPERSEDED
        assert old.superseded_by == switch.id
        assert old.valid_until == clock.now
        result = await mem.recall("Which mobile device am I using?")
        assert all("iPhone 15" not in h.content or "OnePlus" in h.content for h in result.hits)


async def test_a_change_in_other_words_replaces_what_it_changes_about_the_person(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        phone = await mem.observe("Greta uses an iPhone 13.")
        choir = await mem.observe("Greta has choir every Saturday.")
        clock.now += 7 * DAY
        switch = await mem.observe("My coworker Greta switched to a Moto Edge 40.")
        assert await superseded(mem, [phone.id, choir.id]) == {phone.id: switch.id}


async def test_two_equally_plausible_statements_ask_the_user(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        monday = await mem.observe("I go to the gym on Mondays.", source="Bob")
        clock.now += MINUTE
        friday = await mem.observe("I go to the gym on Fridays.", source="Bob")
        clock.now += DAY
        change = await mem.observe("I go to the gym on Sundays now.", source="Bob")
        pending = await mem.conflicts(status="pending")
        assert {c.existing_fact_id for c in pending} == {monday.id, friday.id}
        assert await superseded(mem, [monday.id, friday.id]) == {}
        choice = next(c for c in pending if c.existing_fact_id == friday.id)
        await mem.resolve_conflict(choice.id, choice.new_value)
        assert await superseded(mem, [monday.id, friday.id]) == {friday.id: change.id}


async def test_changes_said_in_many_ways_leave_only_the_current_value(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        olds = [
            await mem.observe("My landlord Greta runs 10 km most days."),
            await mem.observe("I'm learning Dutch on my commute."),
            await mem.observe("I've been living in Valencia since uni."),
            await mem.observe("My boss Aisha has a cat called Bramble."),
        ]
        kept = await mem.observe("My boss Aisha runs 21 km most days.")
        clock.now += 20 * DAY
        news = [
            await mem.observe("Greta went from 10 km to 5 km on daily runs."),
            await mem.observe("FYI: I'm learning Portuguese on my commute."),
            await mem.observe("Just signed a lease in Lisbon, goodbye Valencia."),
            await mem.observe("Aisha's cat goes by Mochi these days."),
        ]
        gone = await superseded(mem, [o.id for o in olds] + [kept.id])
        assert gone == {old.id: new.id for old, new in zip(olds, news, strict=True)}
        result = await mem.recall("How far does Greta run?")
        contents = [h.content for h in result.hits]
        assert "Greta went from 10 km to 5 km on daily runs." in contents
        assert "My landlord Greta runs 10 km most days." not in contents
        history = await mem.recall("How far does Greta run?", include_superseded=True)
        assert "My landlord Greta runs 10 km most days." in [h.content for h in history.hits]


async def test_another_persons_relation_is_not_the_person(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        mother = await mem.observe("Samir Goldberg's mother supports the Boston Celtics.")
        clock.now += 10 * DAY
        await mem.observe("Samir Goldberg's brother supports the Boston Celtics.")
        await mem.observe("Samir Goldberg's brother switched to a Pixel 8 now.")
        assert await superseded(mem, [mother.id]) == {}


async def test_a_message_of_several_sentences_keeps_what_did_not_change(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        both = await mem.observe(
            "My landlord Sofia loves Oaxacan food more than anything. "
            "Also: Sofia can't be near bee stings, severe allergy."
        )
        clock.now += 30 * DAY
        change = await mem.observe("Sofia's favourite is Peruvian food these days, not Oaxacan.")
        assert await superseded(mem, [both.id]) == {both.id: change.id}
        result = await mem.recall("What is Sofia allergic to?")
        top = result.hits[0]
        assert top.content == "Sofia can't be near bee stings, severe allergy."
        assert top.memory.metadata["rest_of"] == both.id
        assert top.memory.timestamp == (await mem.get(both.id)).timestamp
        food = await mem.recall("What food does Sofia love?")
        assert not any("Oaxacan food more than" in h.content for h in food.hits)
        history = await mem.recall("What food does Sofia love?", include_superseded=True)
        assert both.id in {h.id for h in history.hits}


async def test_a_value_said_first_is_replaced_like_any_other(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        thursday = await mem.observe("Thursday evenings are for climbing.")
        clock.now += 4 * DAY
        tuesday = await mem.observe("FYI: Tuesday evenings are for climbing.")
        assert await superseded(mem, [thursday.id, tuesday.id]) == {thursday.id: tuesday.id}


async def test_a_value_change_in_the_same_words_is_no_duplicate(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        thursday = await mem.observe("Tomás does climbing on Thursdays these days.")
        clock.now += 7 * DAY
        friday = await mem.observe("Tomás does climbing on Fridays these days.")
        # Their embeddings are 0.95 apart: only the value tells them apart.
        assert friday.stored == 1 and friday.id != thursday.id
        assert await superseded(mem, [thursday.id]) == {thursday.id: friday.id}
        result = await mem.recall("Which day does Tomás go climbing?")
    assert result.hits[0].id == friday.id
    assert all("Thursdays" not in hit.content for hit in result.hits)


async def test_the_assistants_echo_of_a_replaced_value_goes_with_it(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        said = await mem.observe("Thursday evenings are for climbing.", source="user")
        clock.now += MINUTE
        echo = await mem.observe(
            "I'll keep Thursday evenings free for your climbing.", source="assistant"
        )
        clock.now += MINUTE
        other = await mem.observe("Sure, I'll remind you to water the plants.", source="assistant")
        clock.now += 10 * DAY
        change = await mem.observe("As of January, climbing is on Friday evenings.")
        gone = await superseded(mem, [said.id, echo.id, other.id])
        assert gone == {said.id: change.id, echo.id: change.id}
        result = await mem.recall("What day of the week do I do climbing?")
    assert [hit.id for hit in result.hits][:1] == [change.id]
    assert all("Thursday" not in hit.content for hit in result.hits)


async def test_a_change_replaces_the_one_sentence_of_an_older_message_it_is_about(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    # The new car shares no word with "Lena drives a Volvo estate": compared sentence
    # by sentence without her name, it is about that sentence, not the piano lessons.
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        old = await mem.observe(
            "My sister Lena teaches piano on weekends. Also: Lena drives a Volvo."
        )
        clock.now += 9 * DAY
        new = await mem.observe("Lena got a new Subaru now.")
        assert old.id in await superseded(mem, [old.id])
        car = await mem.recall("What car does my sister Lena have?")
        assert car.hits[0].id == new.id
        assert not any("Volvo" in h.content for h in car.hits)
        piano = await mem.recall("What does Lena teach on weekends?")
        assert piano.hits[0].content == "My sister Lena teaches piano on weekends."


async def test_the_speakers_short_change_replaces_their_closest_value(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    # No name to leave out: the plain cosine says how close the two values are.
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        old = await mem.observe("I prefer high-contrast mode in every app.")
        await mem.observe("I run 12 km every morning.")
        clock.now += 20 * DAY
        new = await mem.observe("Dark mode from now on, please.")
        assert old.id in await superseded(mem, [old.id])
        result = await mem.recall("Which colour scheme should my screens use?")
        assert result.hits[0].id == new.id
        assert not any("high-contrast" in h.content for h in result.hits)


async def test_a_change_finds_its_old_value_among_many_lines_about_the_person(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    # Lines naming Tariq are all close to one another by his name alone; the line the
    # change revises is found among them however many there are.
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        old = await mem.observe("My friend Tariq drinks a cortado every morning.")
        for place in ("the river", "the market", "the station", "the old mill", "the pier"):
            clock.now += DAY
            await mem.observe(f"Had lunch with my friend Tariq near {place}.")
            await mem.observe(f"Went for a walk along {place} with Tariq.")
            await mem.observe(f"Tariq and I finally finished a puzzle of {place}.")
        clock.now += DAY
        await mem.observe("Remind me to send Tariq the photos of the pier.")
        clock.now += DAY
        new = await mem.observe("My friend Tariq switched to a matcha latte.")
        assert old.id in await superseded(mem, [old.id])
        result = await mem.recall("What does Tariq drink in the morning?")
        assert new.id in [h.id for h in result.hits[:3]]
        assert not any("cortado" in h.content for h in result.hits)


async def test_a_replaced_fact_takes_only_its_sentence_of_an_older_message(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    # The extractor reads "lives in" from both; the older message says one more
    # thing, which stays current as its own memory.
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        old = await mem.observe("Jordan lives in Lisbon. Also: Jordan plays chess on Sundays.")
        clock.now += 12 * DAY
        new = await mem.observe("Jordan has a place in Denver.")
        assert old.id in await superseded(mem, [old.id])
        homes = [f.object for f in await mem.facts_about("Jordan") if f.predicate == "lives_in"]
        assert homes == ["Denver"]
        home = await mem.recall("Where does Jordan live?")
        assert home.hits[0].id == new.id
        assert not any("Lisbon" in h.content for h in home.hits)
        chess = await mem.recall("What does Jordan do on Sundays?")
        assert chess.hits[0].content == "Jordan plays chess on Sundays."


async def test_an_echo_goes_with_a_value_a_claim_replaced(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """A move read as a claim (lives_in) takes the assistant's echo of the old home
    along, as a statement replacing a statement does."""
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        said = await mem.observe("I've been based in Tallinn since uni.", source="user")
        clock.now += MINUTE
        echo = await mem.observe("Okay, I'll remember you live in Tallinn.", source="assistant")
        clock.now += 10 * DAY
        change = await mem.observe("Unpacking boxes in our new place in Krakow.", source="user")
        gone = await superseded(mem, [said.id, echo.id])
        assert gone == {said.id: change.id, echo.id: change.id}
        result = await mem.recall("Which city is my home?")
    assert result.hits[0].id == change.id
    assert all("Tallinn" not in hit.content for hit in result.hits)


async def test_a_message_saying_more_than_a_replaced_claim_is_replaced_in_part(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """The only claim read from a two-sentence message is replaced: the other
    sentence still holds and stays findable; the old home is history."""
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        old = await mem.observe(
            "My neighbour Jordan lives in Lisbon. Also: My neighbour Jordan listens to "
            "flamenco nonstop."
        )
        clock.now += 30 * DAY
        new = await mem.observe("Quick update. My neighbour Jordan has a place in Denver.")
        assert (await superseded(mem, [old.id])).get(old.id) == new.id
        music = await mem.recall("What music does my neighbour Jordan listen to?")
        home = await mem.recall("Where does my neighbour Jordan live?")
    assert music.hits[0].content == "My neighbour Jordan listens to flamenco nonstop."
    assert home.hits[0].id == new.id
    assert all("Lisbon" not in hit.content for hit in home.hits)


async def test_what_stays_of_a_message_replaced_in_part_is_replaced_by_a_later_value(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """The rest of a message another statement revised in part keeps the facts it
    still says: they stay current, and a later value of one replaces the rest."""
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.observe(
            "As far as I know Mateo is divorced. Also: Mateo's climbing class is on Thursdays."
        )
        clock.now += 30 * DAY
        await mem.observe("Mateo's climbing class moved to Tuesdays.")
        facts = {f.predicate: f.object for f in await mem.facts_about("Mateo")}
        assert facts.get("relationship_status") == "divorced"
        clock.now += 30 * DAY
        engaged = await mem.observe("Mateo is engaged.")
        status = await mem.recall("What is Mateo's love life situation?")
        facts = {f.predicate: f.object for f in await mem.facts_about("Mateo")}
    assert facts.get("relationship_status") == "engaged"
    assert status.hits[0].id == engaged.id
    assert all("divorced" not in hit.content for hit in status.hits)


async def test_sleep_reads_no_replaced_value_back_from_the_rest_of_a_message(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """What stays of a message revised in part was read already, and once a later
    value replaces it, sleep's abstraction must not read the old value back as a
    fact of the day it ran (a fact newer than every value said after it)."""
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.observe("My best friend Mei follows a pescatarian diet.")
        await mem.observe("Mei lives in Krakow. Also: Mei's dog is named Biscuit.")
        clock.now += 30 * DAY
        await mem.observe("Mei's dog goes by Pickles these days.")
        clock.now += 30 * DAY
        await mem.observe("Mei is in Ghent now, no longer in Krakow.")
        clock.now += 30 * DAY
        osaka = await mem.observe("Mei moved to Osaka.")
        clock.now += 3 * DAY
        await mem.sleep()
        facts = await mem.facts_about("Mei")
        home = await mem.recall("Which city does Mei call home?")
    assert not [f for f in facts if f.object == "Krakow"]
    assert home.hits[0].id in {osaka.id, *(f.id for f in facts if f.object == "Osaka")}
    assert all("lives in Krakow" not in hit.content for hit in home.hits)


async def test_a_new_value_is_kept_as_long_as_the_value_it_replaced(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """ "Switched to learning Swahili." says nothing lasting by its own words (a
    passing remark, forgotten in days), but it replaces a lasting statement: weeks
    later, after a sleep, it is still what memory says."""
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.observe("I'm learning Portuguese on my commute.")
        await mem.observe("My flatmate Dana is studying Japanese.")
        clock.now += 90 * DAY
        swahili = await mem.observe("Switched to learning Swahili.")
        assert swahili.temporal_level == 3  # the level of the statement it replaced
        clock.now += 21 * DAY
        await mem.sleep()
        found = await mem.recall("Which foreign tongue am I picking up?")
    assert found.hits[0].id == swahili.id
    assert all("Portuguese" not in hit.content for hit in found.hits)


async def test_a_bare_first_name_is_the_one_related_person_of_that_name(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """A bare "Hana" is "my old roommate Hana" when the scope knows no other Hana: her new
    employer replaces the old one, and each fact's text is what was said."""
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        old = await mem.observe("My old roommate Hana has a job at Meridian Pharma.")
        clock.now += 30 * DAY
        new = await mem.observe("FYI: Hana works at Tidewater Bank.")
        history = await mem.fact_history("Hana (my old roommate)", "works_at")
        assert [(f.object, f.status, f.content) for f in history] == [
            (
                "Meridian Pharma",
                FactStatus.SUPERSEDED,
                "my old roommate Hana works at Meridian Pharma",
            ),
            ("Tidewater Bank", FactStatus.ACTIVE, "Hana works at Tidewater Bank"),
        ]
        assert (await superseded(mem, [old.id])).get(old.id) == new.id
        result = await mem.recall("Where does my old roommate Hana work?")
    assert result.hits[0].id == new.id
    assert all("Meridian" not in hit.content for hit in result.hits)


async def test_a_new_status_replaces_the_old_and_only_its_own_attribute(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    """A new diet ("Yusuf eats strictly gluten-free") replaces his earlier one, not the go-to
    drink said with the same "Update:" in between; "I'm engaged" replaces "I'm single"."""
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        diet = await mem.observe("My teammate Yusuf follows a pescatarian diet.")
        clock.now += 10 * DAY
        drink = await mem.observe("Update: Yusuf's go-to drink is a flat white with oat milk.")
        clock.now += 10 * DAY
        new_diet = await mem.observe("Update: Yusuf eats strictly gluten-free.")
        single = await mem.observe("Relationship-wise I'm single.")
        clock.now += 10 * DAY
        engaged = await mem.observe("Big news: I'm engaged.")
        gone = await superseded(mem, [diet.id, drink.id, single.id])
        assert gone == {diet.id: new_diet.id, single.id: engaged.id}
        coffee = await mem.recall("What does Yusuf have at coffee shops?")
        love = await mem.recall("What's my love life situation right now?")
    assert coffee.hits[0].id == drink.id
    assert love.hits[0].id == engaged.id
    assert all("single" not in hit.content for hit in love.hits)
