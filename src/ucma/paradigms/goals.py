"""Goals (seed 000's predictive paradigm): the pure rules.

- **Words.** What a goal is about: its content words without the verbs and words
  that say what to do rather than which thing (``goal_words``), and its names.
- **Decomposition** (``decompose``), offline, by the structure of the description:
  a list (numbered or bulleted lines, "1) ... 2) ..."), a sequence ("first ..., then
  ..., finally ...", "; ", "after that"), or actions joined by commas and "and"
  where each part starts with a verb ("Book flights, reserve a hotel and buy a rail
  pass"; "Book flights and hotels" is one action on two things). A closing phrase
  that says what the whole is for ("... for the Japan trip") is given to every part
  that has none of its own. A description with no such structure has no rule
  decomposition; the engine then asks procedural memory (a strategy's steps) or an
  LLM provider, or leaves the goal whole.
- **Progress roll-up** (``rolled_up``): a goal with subgoals is as far along as the
  mean of its subgoals that are not abandoned, and complete when all of them are.
- **Order** (``active_order``): priority first (higher first), then the nearer
  deadline (none last), then the older goal.
- **Topics** (``topics``): the things a goal refers to (runs of content words:
  "hotel", "Lisbon", "Dana's visit"), what ``anticipate`` looks for in memory.
- **Replay** (``replay_goals``): each goal's state rebuilt from its events alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ucma.events.log import Event, EventType, is_redacted
from ucma.paradigms.goal_records import Goal, GoalStatus
from ucma.retrieval.terms import STOPWORDS, keyword_terms

__all__ = [
    "GENERIC",
    "MAX_SUBGOALS",
    "active_order",
    "content_words",
    "decompose",
    "goal_names",
    "goal_state",
    "goal_words",
    "mentions",
    "replay_goals",
    "rolled_up",
    "stem",
    "topics",
]

MAX_SUBGOALS = 12
"""Most subgoals one decomposition makes."""

GENERIC = frozenset(
    str.split(
        """
    book plan get make finish complete help prepare organise organize do start write build
    create set buy find arrange visit learn improve go take have keep try work handle sort
    review check update fix ship launch deliver submit send renew apply reach achieve need
    want new next first last my our their the done sure able goal goals thing things
    stuff way up out soon asap me us please
    """
    )
)
"""Words that say what to do with a thing, not which thing it is."""

_NOT_VERBS = frozenset(
    str.split(
        """
    new next first last my our their the done sure able goal goals thing things stuff way up
    out soon asap me us please
    """
    )
)
# Verbs an action in a goal starts with (imperative), beside GENERIC's verbs.
_VERBS = (GENERIC - _NOT_VERBS) | frozenset(
    str.split(
        """
    reserve pay call email text ask tell invite schedule cancel confirm book compare choose
    pick order collect pack clean install configure deploy migrate test measure read study
    practise practice research draft edit publish post share present record print sign file
    register enroll enrol move sell rent hire train run open close add remove replace
    upgrade back backup restore document design implement refactor debug release merge
    contact meet discuss decide agree negotiate follow gather fill translate summarise
    summarize outline prototype validate verify estimate budget save transfer convert
    download upload sync rewrite polish proofread submit invoice ship deliver return
    exercise cook bake shop cut paint repair renovate tidy declutter donate apologise
    apologize thank celebrate attend watch listen review rehearse memorise memorize
    """
    )
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)]|[a-z][.)])\s+", re.MULTILINE)
_INLINE_NUMBERS = re.compile(r"(?:^|\s)\(?\d+[.)]\s+")
_SEQUENCE = re.compile(
    r"\s*(?:;|\bafter\s+that\b,?|\band\s+then\b|,?\s*\bthen\b|,?\s*\bfinally\b,?|,?\s*\bnext\b,)\s*",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^\s*(?:first(?:ly)?|to\s+start|start\s+by|begin\s+by)\b,?\s*", re.IGNORECASE)
_COORDINATION = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.IGNORECASE)
_PURPOSE = re.compile(
    r"\s+(?P<phrase>(?:for|during|before|ahead\s+of)\s+(?:the|my|our|a|an|his|her|their)\s+"
    r"[^,;]+?)\s*[.!]?$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_PREPOSITIONS = frozenset(
    str.split("for in at on to with from by of about into during before after ahead near")
)


def stem(word: str) -> str:
    """A word folded for comparison: lower case, possessive and plural "s" dropped."""
    word = re.sub(r"['’]s$", "", word.lower())
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str) -> list[str]:
    """The content words of ``text``, stemmed, in order."""
    return [stem(w) for w in keyword_terms(text) if len(w) > 1]


def goal_words(text: str) -> frozenset[str]:
    """What a goal is about: its content words, stemmed, without ``GENERIC``."""
    return frozenset(w for w in content_words(text) if w not in GENERIC)


_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]*")


def goal_names(text: str) -> frozenset[str]:
    """The names a goal uses (capitalised words after its first), stemmed."""
    return frozenset(stem(m.group()) for m in _CAPITALISED.finditer(text.strip()))


def mentions(text: str, topic: str) -> bool:
    """Whether ``text`` mentions every content word of ``topic``."""
    wanted = set(content_words(topic))
    return bool(wanted) and wanted <= set(content_words(text))


def _tidy(part: str) -> str:
    part = part.strip(" \t\n,.;:")
    return part[:1].upper() + part[1:] if part else part


_DETERMINER = re.compile(
    r"^[a-z][\w-]*\s+(?:the|a|an|my|our|their|his|her|its|this|that|these|those|some|all)\b"
)


def _is_action(part: str) -> bool:
    """Whether ``part`` starts with a verb: a known one, one of a verb's shapes
    ("-ize", "-ify"), or an unknown lower-case word followed by a determiner
    ("decommission the cluster")."""
    text = part.strip()
    first = _WORD.match(text)
    if first is None:
        return False
    word = first.group().lower()
    return (
        word in _VERBS
        or word.endswith(("ize", "ise", "ify"))
        or _DETERMINER.match(text) is not None
    )


def _actions(text: str) -> list[str]:
    """Actions joined by commas and "and", each starting with a verb; [text] when
    any part is not an action (a list of things, not of steps)."""
    parts = [p for p in _COORDINATION.split(text) if p.strip()]
    if len(parts) < 2 or not all(_is_action(p) for p in parts):
        return [text]
    closing = _PURPOSE.search(parts[-1])
    if closing is not None:
        phrase = closing.group("phrase")
        parts = [
            p if any(w.lower() in _PREPOSITIONS for w in _WORD.findall(p)[1:]) else f"{p} {phrase}"
            for p in parts[:-1]
        ] + [parts[-1]]
    return parts


def decompose(description: str) -> list[str]:
    """Subgoals read from the structure of ``description`` (see the module
    docstring), in order; empty when it has none (one action)."""
    text = description.strip()
    if _LIST_ITEM.search(text) and len(_LIST_ITEM.findall(text)) >= 2:
        items = [i for i in _LIST_ITEM.split(text) if i.strip()]
        body = items[1:] if not _LIST_ITEM.match(text) else items
        parts = body
    elif len(_INLINE_NUMBERS.findall(text)) >= 2:
        parts = [p for p in _INLINE_NUMBERS.split(text)[1:] if p.strip()]
    else:
        parts = [p for p in _SEQUENCE.split(_LEAD.sub("", text)) if p.strip()]
        parts = [a for p in parts for a in _actions(p)]
    subgoals = list(dict.fromkeys(_tidy(p) for p in parts if _tidy(p)))
    if len(subgoals) < 2:
        return []
    return subgoals[:MAX_SUBGOALS]


def rolled_up(children: Sequence[Goal]) -> tuple[float, bool]:
    """A parent's progress from its subgoals, and whether it is complete: the mean
    progress of those not abandoned; complete when each of them is."""
    counted = [c for c in children if c.status is not GoalStatus.ABANDONED]
    if not counted:
        return 0.0, False
    done = all(c.status is GoalStatus.COMPLETED for c in counted)
    mean = 1.0 if done else sum(c.progress for c in counted) / len(counted)
    return min(1.0, max(0.0, mean)), done


def active_order(goal: Goal) -> tuple[float, float, float, str]:
    """Sort key of active goals: higher priority, then nearer deadline (none last),
    then older."""
    deadline = goal.deadline if goal.deadline is not None else float("inf")
    return (-goal.priority, deadline, goal.created_at, goal.id)


def topics(text: str, *, limit: int = 6) -> list[str]:
    """The things ``text`` refers to: runs of content words (not stopwords, verbs or
    generic goal words; punctuation ends a run), in their own spelling."""
    runs: list[list[str]] = []
    current: list[str] = []
    end = 0
    for match in _WORD.finditer(text):
        word = match.group()
        folded = word.lower().replace("’", "'")
        plain = folded.removesuffix("'s")
        if current and re.search(r"[^\w\s'’-]", text[end : match.start()]):
            runs.append(current)  # punctuation ends a run
            current = []
        end = match.end()
        skip = (
            folded in STOPWORDS
            or plain in STOPWORDS
            or stem(plain) in GENERIC
            or plain in _VERBS
            or len(plain) < 2
        )
        if skip:
            if current:
                runs.append(current)
            current = []
        else:
            current.append(word.removesuffix("'s").removesuffix("’s"))
    if current:
        runs.append(current)
    found = list(dict.fromkeys(" ".join(run) for run in runs))
    return found[:limit]


def replay_goals(events: Iterable[Event]) -> dict[str, dict[str, Any]]:
    """Each goal's status, progress, subgoals, blocking_on and last_worked rebuilt from
    a scope's events alone, in ``seq`` order: what ``replay`` compares with the live
    goals (``goal_state``)."""
    state: dict[str, dict[str, Any]] = {}
    for event in events:
        if is_redacted(event):  # its goal named the person forgotten, and went too
            continue
        payload = event.payload
        if event.type == EventType.GOAL_ADDED:
            g = payload["goal"]
            state[g["id"]] = {
                "status": g["status"],
                "progress": float(g["progress"]),
                "subgoals": tuple(g["subgoals"]),
                "blocking_on": tuple(g["blocking_on"]),
                "last_worked": g["last_worked"],
            }
            continue
        goal = state.get(str(payload.get("goal_id", "")))
        if goal is None:
            continue
        if event.type == EventType.GOAL_DECOMPOSED:
            goal["subgoals"] = tuple(payload["subgoals"])
        elif event.type == EventType.GOAL_PROGRESSED:
            goal["progress"] = float(payload["progress"])
            goal["status"] = payload["status"]
            if payload.get("last_worked") is not None:
                goal["last_worked"] = payload["last_worked"]
        elif event.type in (
            EventType.GOAL_SUSPENDED,
            EventType.GOAL_RESUMED,
            EventType.GOAL_ABANDONED,
        ):
            goal["status"] = payload["status"]
        elif event.type == EventType.GOAL_WORKED:
            goal["blocking_on"] = tuple(payload["blocking_on"])
            goal["last_worked"] = payload["last_worked"]
    return state


def goal_state(goal: Goal) -> dict[str, Any]:
    """A live goal's state in ``replay_goals``' shape."""
    return {
        "status": goal.status.value,
        "progress": goal.progress,
        "subgoals": tuple(goal.subgoals),
        "blocking_on": tuple(goal.blocking_on),
        "last_worked": goal.last_worked,
    }
