"""Keeping goals consistent on the storage thread (``ucma.engine.goals``): the event of
each change, progress rolled up to the parents, the topics memory knows, and the conflict
check that suspends the goals memory contradicts and resumes the others
(``ucma.paradigms.goal_conflicts``). Functions taking a ``Storage`` run inside the
caller's transaction or open their own."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ucma.config import GoalConfig
from ucma.events.log import EventType, record
from ucma.paradigms.goal_conflicts import Statement, goal_conflicts
from ucma.paradigms.goal_records import OPEN_STATUSES, Goal, GoalStatus
from ucma.paradigms.goals import content_words, goal_names, goal_words, mentions, rolled_up
from ucma.serialization import goal_to_dict
from ucma.storage.base import Storage
from ucma.types import Fact, MemoryKind, Scope

__all__ = ["check_goals", "goal_event", "known_topics", "roll_up"]

MAX_DEPTH = 32
"""The deepest chain of parents a goal's context is read from."""


def goal_event(storage: Storage, scope: Scope, kind: EventType, goal: Goal, now: float) -> None:
    """Log one change of ``goal`` with what ``replay_goals`` needs to rebuild it."""
    if kind is EventType.GOAL_ADDED:
        payload: dict[str, object] = {"goal": goal_to_dict(goal)}
    elif kind is EventType.GOAL_DECOMPOSED:
        payload = {"goal_id": goal.id, "subgoals": list(goal.subgoals)}
    elif kind is EventType.GOAL_PROGRESSED:
        payload = {
            "goal_id": goal.id,
            "progress": goal.progress,
            "status": goal.status.value,
            "last_worked": goal.last_worked,
        }
    elif kind is EventType.GOAL_WORKED:
        payload = {
            "goal_id": goal.id,
            "blocking_on": list(goal.blocking_on),
            "last_worked": goal.last_worked,
        }
    else:  # suspended, resumed, abandoned
        payload = {
            "goal_id": goal.id,
            "status": goal.status.value,
            "conflicts": [c.to_dict() for c in goal.conflicts],
            "accepted": list(goal.accepted),
        }
    record(storage, scope, kind, payload, now)


def _ancestors(storage: Storage, scope: Scope, goal: Goal) -> list[Goal]:
    chain: list[Goal] = []
    current = goal
    while current.parent_id and len(chain) < MAX_DEPTH:
        parent = storage.goals.get(scope, current.parent_id)
        if parent is None:
            break
        chain.append(parent)
        current = parent
    return chain


def _context(storage: Storage, scope: Scope, goal: Goal) -> tuple[str, set[str]]:
    """A goal's description with its parents' (what a subgoal is part of), and the
    memories it and its parents were resumed despite."""
    chain = [goal, *_ancestors(storage, scope, goal)]
    return " ".join(g.description for g in chain), {i for g in chain for i in g.accepted}


def roll_up(storage: Storage, scope: Scope, goal: Goal, now: float) -> list[Goal]:
    """Progress and completion carried from ``goal`` up its parents, each changed
    parent written with a ``goal.progressed`` event; returns them."""
    changed: list[Goal] = []
    current = goal
    for _ in range(MAX_DEPTH):
        if not current.parent_id:
            break
        parent = storage.goals.get(scope, current.parent_id)
        if parent is None:
            break
        children = storage.goals.get_many(scope, parent.subgoals)
        progress, done = rolled_up([children[i] for i in parent.subgoals if i in children])
        status = parent.status
        if done and parent.is_open:
            status = GoalStatus.COMPLETED
        if (progress, status) == (parent.progress, parent.status):
            break
        parent.progress, parent.status, parent.updated_at = progress, status, now
        parent.last_worked = now
        if status is GoalStatus.COMPLETED:
            parent.completed_at = now
        storage.goals.put([parent])
        goal_event(storage, scope, EventType.GOAL_PROGRESSED, parent, now)
        changed.append(parent)
        current = parent
    return changed


def known_topics(storage: Storage, scope: Scope, wanted: list[str]) -> set[str]:
    """The topics some memory (of any kind but procedures) mentions."""
    known: set[str] = set()
    kinds = [MemoryKind.EPISODIC, MemoryKind.SEMANTIC, MemoryKind.LEARNING]
    for topic in wanted:
        terms = content_words(topic)
        if not terms:
            continue
        if storage.facts.about(scope, topic):
            known.add(topic)
            continue
        hits = storage.memories.keyword_search(scope, terms, 20, kinds=kinds)
        records = storage.memories.get_many(scope, [i for i, _ in hits])
        if any(mentions(r.content, topic) for r in records.values()):
            known.add(topic)
    return known


def check_goals(
    storage: Storage,
    scope: Scope,
    cfg: GoalConfig,
    now: float,
    about: Sequence[str] | None = None,
) -> list[Goal]:
    """Suspend the open goals memory contradicts and resume those it no longer does,
    each change with its event, in one transaction; returns the goals changed.

    ``about``: the texts just written. Only the goals that share a word or a name with
    them are checked: what contradicts a goal, or stops doing so, names something of it
    (a fact read from a statement is in the statement's words). None: every open goal."""
    open_goals = storage.goals.list(scope, statuses=OPEN_STATUSES, limit=cfg.max_open)
    if not open_goals:
        return []
    said = None if about is None else {w for text in about for w in content_words(text)}
    speakers = ("user", scope.user_id)
    loaded: dict[str, Statement] = {}
    changed: list[Goal] = []
    for goal in open_goals:
        text, accepted = _context(storage, scope, goal)
        if said is not None and not (goal_words(text) | goal_names(text)) & said:
            continue
        found = goal_conflicts(
            text,
            _statements(storage, scope, text, cfg, now, loaded),
            _facts(storage, scope, text, speakers),
            now=now,
            speakers=speakers,
            accepted=accepted,
        )
        if [c.memory_id for c in found] == [c.memory_id for c in goal.conflicts]:
            continue
        goal.conflicts = found
        goal.status = GoalStatus.SUSPENDED if found else GoalStatus.ACTIVE
        goal.updated_at = now
        changed.append(goal)
    if not changed:
        return []
    with storage.transaction():
        storage.goals.put(changed)
        for goal in changed:
            kind = (
                EventType.GOAL_SUSPENDED
                if goal.status is GoalStatus.SUSPENDED
                else EventType.GOAL_RESUMED
            )
            goal_event(storage, scope, kind, goal, now)
    return changed


def _statements(
    storage: Storage,
    scope: Scope,
    text: str,
    cfg: GoalConfig,
    now: float,
    loaded: dict[str, Statement],
) -> list[Statement]:
    """Observed statements that share words with a goal, the superseded left out;
    ``loaded`` keeps those read for other goals of the same check."""
    terms = sorted(goal_words(text))
    if not terms:
        return []
    hits = storage.memories.keyword_search(
        scope, terms, cfg.statement_candidates, kinds=[MemoryKind.EPISODIC]
    )
    ids = [i for i, _ in hits]
    gone = storage.conflicts.superseded(scope, ids, at=now)
    wanted = [i for i in ids if i not in gone]
    missing = [i for i in wanted if i not in loaded]
    for memory in storage.memories.get_many(scope, missing).values():
        moment = float(getattr(memory, "timestamp", memory.created_at))
        loaded[memory.id] = Statement(memory.id, memory.content, moment)
    return [loaded[i] for i in wanted if i in loaded]


def _facts(storage: Storage, scope: Scope, text: str, speakers: Sequence[str]) -> list[Fact]:
    """Every version of the facts about the names a goal uses and about the user."""
    names = set(_names(text)) | set(speakers)
    facts: dict[str, Fact] = {}
    for name in sorted(names):
        for fact in storage.facts.about(scope, name, include_superseded=True):
            facts.setdefault(fact.id, fact)
    return list(facts.values())


def _names(text: str) -> list[str]:
    """Capitalised words and runs of them after the first word ("Dana", "Acme Robotics")."""
    runs = re.findall(r"(?<!^)\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*", text.strip())
    found: list[str] = []
    for run in runs:
        cleaned = re.sub(r"['’]s$", "", run)
        found.append(cleaned)
        found += cleaned.split()
    return list(dict.fromkeys(found))
