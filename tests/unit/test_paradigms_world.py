"""The paradigms benchmark's world (bench/paradigms_world.py) is what its docs say: hidden
facts decide which action works, some domains are outside the agent's competence, the
notes in memory are a mix of true and wrong, and what the agent reads names no rule."""

from __future__ import annotations

import random
import statistics

from tests.bench_modules import load_bench

world = load_bench("paradigms_world")
bench = load_bench("paradigms")


def test_domains_inside_competence_have_a_good_action_that_depends_on_hidden_facts() -> None:
    inside = [d for d in world.DOMAINS if d.inside]
    outside = [d for d in world.DOMAINS if not d.inside]
    assert len(world.DOMAINS) >= 5 and len(inside) >= 5 and outside
    for domain in inside:
        bests = set()
        for context in domain.contexts():
            chances = [domain.probability(a, context) for a in domain.actions]
            assert max(chances) >= 0.8
            bests.add(chances.index(max(chances)))
        # No single action is best everywhere: the context decides, through a hidden fact.
        assert len(bests) >= 2, domain.name
    for domain in outside:
        for context in domain.contexts():
            assert all(domain.probability(a, context) <= 0.15 for a in domain.actions)


def test_notes_are_helpful_and_misleading_as_labelled() -> None:
    notes = world.NOTES
    assert any(n.true for n in notes) and any(not n.true for n in notes)
    for note in notes:
        claim = bench.read_claim(note.text)
        assert claim is not None and claim.works
        [domain] = [d for d in world.DOMAINS if claim.action in d.actions]
        chances = [
            domain.probability(claim.action, c)
            for c in domain.contexts()
            if bench.compatible(claim.conditions, c)
        ]
        assert chances
        assert (statistics.fmean(chances) >= 0.5) == note.true, note.text


def test_what_the_agent_reads_names_no_rule() -> None:
    for task in world.make_tasks(300, 4):
        domain = task.domain
        values = {v for _, vs in domain.variables for v in vs}
        for action in domain.actions:
            assert action not in task.text
        for error in domain.errors:
            assert not any(a in error for a in domain.actions)
            assert not any(v in error.split() for v in values)


def test_outcomes_follow_the_hidden_probabilities() -> None:
    sim = world.World(5)
    [domain] = [d for d in world.DOMAINS if d.name == "deploys"]
    task = world.Task(domain, "Deploy build 3.1", {"target": "staging", "day": "friday"})
    pushes = [sim.attempt(task, "push the build") for _ in range(2000)]
    bots = [sim.attempt(task, "hand the build to the release bot") for _ in range(2000)]
    assert sum(ok for ok, _ in pushes) / 2000 < 0.1  # staging rejects pushes on Fridays
    assert sum(ok for ok, _ in bots) / 2000 > 0.78
    assert {error for ok, error in pushes if not ok} == {"upload refused"}


def test_the_labelled_suite_covers_every_domain_and_context() -> None:
    suite = world.labelled_suite(1, per_context=2)
    assert len(suite) == 2 * sum(len(d.contexts()) for d in world.DOMAINS)
    for task, inside in suite:
        assert inside == task.domain.inside


def test_the_agent_reads_its_episodes_back_and_chooses_optimistically() -> None:
    task = world.Task(world.DOMAINS[0], "Deploy build 3.1", {"target": "staging", "day": "friday"})
    texts = [
        "Deploy build 3.1 (deploys): 'push the build' failed when target = staging and "
        "day = friday (upload refused).",
        "Deploy build 2.4 (deploys): 'push the build' worked when target = staging and "
        "day = weekday.",  # another context: not counted
        "Team wiki: 'hand the build to the release bot' works when day = friday.",
        "Something unrelated happened.",
    ]
    counts = bench.count_claims(texts, task)
    assert counts == {
        "push the build": [0.0, 1.0],
        "run a blue-green switch": [0.0, 0.0],
        "hand the build to the release bot": [1.0, 0.0],
    }
    assert bench.choose(counts, random.Random(1)) == "hand the build to the release bot"
    # Untried beats tried and failed: the bonus explores.
    counts["hand the build to the release bot"] = [0.0, 0.0]
    assert bench.choose(counts, random.Random(1)) in {
        "run a blue-green switch",
        "hand the build to the release bot",
    }
