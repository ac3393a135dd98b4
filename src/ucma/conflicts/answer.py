"""Answers from memory: whole memories and clean facts, conflicts resolved out loud.

``compose_answer`` is pure: the engine recalls, reads the evidence behind the
hits (``ucma.conflicts.evidence``: current values of superseded facts, facts
extracted from episodes, source episodes, replaced values), consults sources
of truth, and hands everything here. No LLM is involved; when one is
configured the engine lets it rewrite the response from ``Answer.sources``
and ``Answer.notes`` (``ucma.providers.answers``).

What the response is made of (``ucma.conflicts.phrasing``):

- the best-ranked memory that says something current, plus a near-tie
  (score within ``FOLLOWER_RATIO`` of the best live match, at most
  ``MAX_MEMORIES``), among those about whom the question asks when any is
  (``about_another``: what is said of another Maya, or of the user's landlord,
  answers nothing about the user's best friend Maya, or about the user); when
  the best match says nothing (chit-chat), weaker
  matches are not presented as the answer either; a fact
  as a clean sentence ("Dana lives in Denver"), any other memory quoted whole
  ("From memory: Dana is allergic to peanuts."). A fact that makes no clean
  sentence is replaced by its source episode's text, or skipped; stale and
  content-free memories are skipped; an episode whose extracted value was
  superseded is replaced by the current value;
- a current value that replaced an older one says so once, in place:
  "Dana lives in Denver (previously Boston)"; a source of truth's correction
  keeps seed 002's wording "Status is shipped (previously in_fulfillment)";
- a pending conflict is shown, as a question to the user, only when it
  concerns the answer: it involves one of the facts the answer stands on, or
  shares the subject and predicate of one. Conflicts about other topics stay
  out of the answer;
- a conclusion whose premise changed (flagged for review) gets a caveat and
  counts at ``review_factor`` weight (seed 000: "trust fact, flag prediction");
- several procedures: the best by competence x success rate is suggested;
- recall's ``low_confidence``: the answer says it does not know instead of
  presenting weak matches; the hits stay in ``Answer.hits``.

Confidence is the mean confidence of the facts used (flagged ones at
``review_factor`` weight), else recall's confidence (or the best hit's score),
halved while a question to the user is pending; 0 when nothing is said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ucma.conflicts.evidence import Evidence
from ucma.conflicts.phrasing import fact_sentence, is_content_free, is_stale, quote, sentence
from ucma.conflicts.predicates import normalise_predicate
from ucma.conflicts.reports import conflict_sentence, predicate_words, review_flag_to_dict
from ucma.people import (
    about_someone_else,
    asks_about_speaker,
    known_people,
    speaker_relations,
    subjects_in,
)
from ucma.serialization import hit_to_dict, record_to_dict
from ucma.types import (
    Conflict,
    ConflictStatus,
    Fact,
    FactStatus,
    Hit,
    Learning,
    MemoryRecord,
    Procedure,
    ResolutionStrategy,
    ReviewFlag,
)

__all__ = [
    "FOLLOWER_RATIO",
    "MAX_MEMORIES",
    "NOTHING",
    "UNKNOWN",
    "Answer",
    "about_another",
    "compose_answer",
    "material_lines",
]

LOW_CONFIDENCE = 0.5
MAX_MEMORIES = 2
"""Most retrieved memories one answer draws on."""
FOLLOWER_RATIO = 0.97
"""A memory after the first joins the answer only when its score is at least this
share of the best live match's: near-ties complete an answer; in small everyday
stores close distractors (another attribute of the same person) score within 10%
of the answer, so anything looser presents them as part of it."""
_MAX_FACT_SENTENCES = 5
NOTHING = "I don't have anything about that yet."
UNKNOWN = "I don't know; nothing I remember answers that."
_MEMORY_PREFIX = "From memory: "


@dataclass(slots=True)
class Answer:
    """What ``AsyncMemory.answer`` returns; ``to_dict`` is seed 002's response shape.

    ``facts`` are the facts the answer stands on; ``conflicts`` those that
    concern it; ``hits`` everything recall returned (also when the answer
    abstains). ``sources`` are the statements the response is built from, in
    the order an LLM cites them ([1], [2] ...), and ``notes`` the questions to
    the user that go with them; ``composed_by`` is "template" or the model
    that wrote the response; ``low_confidence`` is recall's verdict.
    """

    query: str
    response: str
    confidence: float
    facts: list[Fact] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    procedures: list[Procedure] = field(default_factory=list)
    flagged: list[ReviewFlag] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    low_confidence: bool = False
    composed_by: str = "template"

    @property
    def disambiguation_required(self) -> bool:
        return any(c.status is ConflictStatus.PENDING for c in self.conflicts)

    @property
    def options(self) -> list[str]:
        pending = [c for c in self.conflicts if c.status is ConflictStatus.PENDING]
        return list(dict.fromkeys(o for c in pending for o in c.options))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "query": self.query,
            "response": self.response,
            "confidence": self.confidence,
            "low_confidence": self.low_confidence,
            "conflicts_detected": [c.to_dict() for c in self.conflicts],
            "disambiguation_required": self.disambiguation_required,
            "facts": [record_to_dict(f) for f in self.facts],
            "procedures": [record_to_dict(p) for p in self.procedures],
            "flagged_for_review": [review_flag_to_dict(f) for f in self.flagged],
            "caveats": list(self.caveats),
            "memories": [hit_to_dict(h) for h in self.hits],
            "sources": list(self.sources),
            "composed_by": self.composed_by,
        }
        if self.disambiguation_required:
            data["options"] = self.options
        return data


def _winning_conflict(fact: Fact, conflicts: Sequence[Conflict]) -> Conflict | None:
    """The latest settled conflict that chose this fact's value."""
    chosen = [
        c
        for c in conflicts
        if c.status in (ConflictStatus.RESOLVED, ConflictStatus.USER_RESOLVED)
        and fact.id in (c.existing_fact_id, c.new_fact_id)
        and c.chosen_value is not None
        and c.chosen_value.strip().lower() == fact.object.strip().lower()
    ]
    return max(chosen, key=lambda c: c.detected_at) if chosen else None


def _slot(subject: str, predicate: str) -> tuple[str, str]:
    return " ".join(subject.lower().split()), normalise_predicate(predicate)


def _question(conflict: Conflict) -> str:
    """A pending conflict as a question naming whose value it is."""
    probe = Fact(
        id="",
        user_id="",
        content="",
        created_at=0.0,
        subject=conflict.subject,
        predicate=conflict.predicate,
        object=conflict.existing_value,
    )
    old = fact_sentence(probe)
    probe.object = conflict.new_value
    new = fact_sentence(probe)
    if old is None or new is None or old.startswith(conflict.subject + "'"):
        # Attribute slots keep seed 002's wording ("... about delivery preference ...").
        what = predicate_words(conflict.predicate)
        return (
            f"I have conflicting information about {what} for {conflict.subject}: "
            f"'{conflict.existing_value}' vs '{conflict.new_value}'. Which is correct?"
        )
    return f"I have conflicting information: {old}, or {new}. Which is correct?"


@dataclass(slots=True)
class _Statement:
    text: str
    quoted: bool
    facts: list[Fact]


class _Composer:
    """Walks the hits best first and collects what the answer states."""

    def __init__(
        self,
        conflicts: Sequence[Conflict],
        flags: Mapping[str, ReviewFlag],
        evidence: Evidence,
        now: float | None,
    ) -> None:
        self.conflicts = list(conflicts)
        self.flags = flags
        self.evidence = evidence
        self.now = now
        self.pending = [c for c in conflicts if c.status is ConflictStatus.PENDING]
        self.statements: list[_Statement] = []
        self.asked: list[Conflict] = []
        self.settled: list[Conflict] = []
        self.facts: list[Fact] = []
        self.covered: set[str] = set()
        self.texts: set[str] = set()

    def _disputes(self, fact: Fact) -> list[Conflict]:
        return [c for c in self.pending if fact.id in (c.existing_fact_id, c.new_fact_id)]

    def _state(self, text: str, quoted: bool, facts: list[Fact], ids: set[str]) -> bool:
        key = " ".join(text.lower().split()).rstrip(".")
        self.covered |= ids
        if key in self.texts:
            return False
        self.texts.add(key)
        self.statements.append(_Statement(text, quoted, facts))
        return True

    def add_fact(self, fact: Fact) -> bool:
        """State one current fact; True when the answer now says something more."""
        if fact.id in self.covered:
            return False
        disputes = self._disputes(fact)
        if disputes:
            self.covered.add(fact.id)
            self.facts.append(fact)
            fresh = [c for c in disputes if c not in self.asked]
            self.asked.extend(fresh)
            return bool(fresh)
        if is_stale(fact, self.now):
            return False
        winning = _winning_conflict(fact, self.conflicts)
        clean = fact_sentence(fact)
        source = self.evidence.sources.get(fact.id)
        ids = {fact.id} | ({source.id} if source is not None else set())
        if winning is not None and winning.resolution_strategy is ResolutionStrategy.TRUST_DB:
            text, quoted = sentence(conflict_sentence(winning)), False
        elif clean is not None and fact.status is FactStatus.DISPUTED:
            text, quoted = sentence(f"{clean} (disputed; waiting for the user to confirm)"), False
        elif clean is not None:
            text, quoted = sentence(self._with_change(clean, fact, winning)), False
        elif source is not None and not is_stale(source, self.now):
            if source.id in self.covered or is_content_free(source.content):
                return False
            text, quoted = quote(source), True
        else:
            return False
        if winning is not None and winning not in self.settled:
            self.settled.append(winning)
        self.facts.append(fact)
        return self._state(text, quoted, [fact], ids)

    def _with_change(self, clean: str, fact: Fact, winning: Conflict | None) -> str:
        if winning is not None:
            kept_old = winning.chosen_value == winning.existing_value
            if kept_old:
                return f"{clean} ({winning.new_value} was reported later but not adopted)"
            old: str | None = winning.existing_value
        else:
            old = self.evidence.previous.get(fact.id)
        if old is None or old.strip().lower() == fact.object.strip().lower():
            return clean
        return f"{clean} (previously {old})"

    def add_hit(self, hit: Hit, current: Sequence[Fact]) -> bool:
        """State what ``hit`` contributes; True when the answer now says more."""
        record = hit.memory
        if hit.id in self.covered:
            return False
        if isinstance(record, Fact) or hit.id in self.evidence.current:
            added = [self.add_fact(f) for f in current]
            self.covered.add(hit.id)
            return any(added)
        if hit.id in self.flags or isinstance(record, Procedure):
            return False
        if is_stale(record, self.now) or is_content_free(record.content):
            return False
        derived = self.evidence.derived.get(hit.id, [])
        if any(self._disputes(f) for f in derived):
            # Its value is one side of an open dispute: ask rather than quote it.
            return any([self.add_fact(f) for f in derived])
        self.facts.extend(f for f in derived if f not in self.facts)
        return self._state(quote(record), True, derived, {hit.id, *(f.id for f in derived)})

    def concerning(self) -> None:
        """Ask the pending conflicts that share a used fact's subject and predicate."""
        slots = {_slot(f.subject, f.predicate) for f in self.facts}
        ids = {f.id for f in self.facts}
        for c in self.pending:
            if c in self.asked:
                continue
            if {c.existing_fact_id, c.new_fact_id} & ids or _slot(c.subject, c.predicate) in slots:
                self.asked.append(c)

    def response_parts(self) -> list[str]:
        parts = [_question(c) for c in self.asked]
        prefixed = False
        for s in self.statements:
            if s.quoted and not prefixed:
                parts.append(_MEMORY_PREFIX + s.text)
                prefixed = True
            else:
                parts.append(s.text)
        return parts


def _fallback_current(hit: Hit, facts: Sequence[Fact]) -> list[Fact]:
    """Without evidence: the given facts on the hit's slot, or the hit while current."""
    record = hit.memory
    if not isinstance(record, Fact):
        return []
    slot = _slot(record.subject, record.predicate)
    same = [f for f in facts if _slot(f.subject, f.predicate) == slot]
    return same or ([record] if record.is_current else [])


def _caveats(hits: Sequence[Hit], flags: Mapping[str, ReviewFlag]) -> list[str]:
    caveats = []
    for hit in hits:
        if hit.id in flags:
            label = hit.memory.title if isinstance(hit.memory, Learning) else hit.content
            caveats.append(f"'{label}' was drawn from a premise that has changed; it needs review")
    return caveats


def _flagged(
    hits: Sequence[Hit], facts: Sequence[Fact], flags: Mapping[str, ReviewFlag]
) -> list[ReviewFlag]:
    flagged = [flags[h.id] for h in hits if h.id in flags]
    return flagged + [flags[f.id] for f in facts if f.id in flags and flags[f.id] not in flagged]


def compose_answer(
    query: str,
    hits: Sequence[Hit],
    facts: Sequence[Fact],
    conflicts: Sequence[Conflict],
    flags: Mapping[str, ReviewFlag],
    *,
    review_factor: float,
    evidence: Evidence | None = None,
    now: float | None = None,
    low_confidence: bool = False,
    recall_confidence: float | None = None,
) -> Answer:
    """Build the answer from the hits (best first), the current ``facts`` behind
    them, the ``conflicts`` touching those facts and the open review ``flags``
    (see the module docstring). ``evidence`` comes from ``gather_evidence``;
    without it each fact hit stands for the given facts on its slot. ``now``
    decides expiry (None: no expiry check); ``low_confidence`` makes the answer
    abstain."""
    ev = evidence if evidence is not None else Evidence()
    composer = _Composer(conflicts, flags, ev, now)
    reached: set[str] = set()
    caveats = _caveats(hits, flags)
    procedures = sorted(
        (h.memory for h in hits if isinstance(h.memory, Procedure)),
        key=lambda p: (-p.ranking_score, p.id),
    )
    if low_confidence and hits:
        shown = recall_confidence if recall_confidence is not None else 0.0
        caveats.append(
            f"Recall's confidence is low ({shown:.2f}); the closest memories are listed "
            "but not used as the answer"
        )
        return Answer(
            query=query,
            response=UNKNOWN,
            confidence=max(0.0, min(1.0, shown)),
            hits=list(hits),
            flagged=_flagged(hits, [], flags),
            caveats=caveats,
            low_confidence=True,
        )

    # What is said of someone else answers nothing about whom the question asks,
    # unless nothing recalled is about them.
    others = {hit.id for hit in hits if about_another(query, hit.memory.content)}
    if len(others) == len(hits):
        others = set()
    lead: float | None = None
    used = 0
    for hit in hits:
        current = ev.current.get(hit.id)
        if current is None:
            current = _fallback_current(hit, facts)
        reached |= {f.id for f in current} | {f.id for f in ev.derived.get(hit.id, [])}
        if (
            hit.id in others
            or used >= MAX_MEMORIES
            or (lead is not None and hit.score < FOLLOWER_RATIO * lead)
        ):
            continue
        said = composer.add_hit(hit, current)
        used += said
        if lead is None and (said or not is_stale(hit.memory, now)):
            # The best live match sets the bar, even when it says nothing itself
            # (chit-chat, a doubted lesson): weaker matches are not answers.
            lead = hit.score
    for fact in facts:
        if fact.id not in reached and len(composer.statements) < _MAX_FACT_SENTENCES:
            composer.add_fact(fact)
    composer.concerning()

    parts = composer.response_parts()
    if procedures:
        best = procedures[0]
        parts.append(
            f"Suggested procedure: {best.name} (success rate {best.success_rate:.0%} over "
            f"{best.execution_count} runs)"
        )
    used_facts = composer.facts
    if used_facts:
        weights = [f.confidence * (review_factor if f.id in flags else 1.0) for f in used_facts]
        confidence = sum(weights) / len(weights)
    elif recall_confidence is not None:
        confidence = recall_confidence
    else:
        confidence = max((h.score for h in hits), default=0.0)
    if composer.asked:
        confidence *= 0.5
    if not parts:
        confidence = 0.0
    confidence = max(0.0, min(1.0, confidence))
    response = " ".join(sentence(p) for p in parts) if parts else NOTHING
    if parts and confidence < LOW_CONFIDENCE and not composer.asked:
        caveats.append("Confidence is low; more facts would help")
    return Answer(
        query=query,
        response=response,
        confidence=confidence,
        facts=used_facts,
        conflicts=[*composer.asked, *composer.settled],
        hits=list(hits),
        procedures=procedures,
        flagged=_flagged(hits, used_facts, flags),
        caveats=caveats,
        sources=[s.text for s in composer.statements],
        notes=[_question(c) for c in composer.asked],
    )


def about_another(query: str, content: str) -> bool:
    """Whether ``content`` is about someone other than whom ``query`` asks about:
    for a question naming people ("What screen appearance does my best friend Maya
    like?"), a memory naming only others ("Maya Tanaka likes high-contrast mode";
    "My sister Ines moved to Lisbon" is about "my sister"); for a question about
    the asker, a memory about a person it names ("My landlord Bruno orders a
    matcha latte")."""
    names = known_people([query, content])
    wanted = subjects_in(query, names)
    if wanted:
        theirs = subjects_in(content, names) | speaker_relations(content)
        return bool(theirs) and not theirs & wanted
    return asks_about_speaker(query) and about_someone_else(content)


def material_lines(
    records: Sequence[MemoryRecord], evidence: Evidence, now: float | None
) -> list[str]:
    """Current statements for an LLM context, one per line, each once: every record
    in order, through the same rules as an answer (clean facts, whole memories,
    current values in place of stale ones, no content-free text, no disputes
    presented as settled)."""
    composer = _Composer([], {}, evidence, now)
    for record in records:
        hit = Hit(memory=record, score=1.0, relevance=1.0, source="context")
        current = evidence.current.get(record.id, [])
        composer.add_hit(hit, current)
    return [s.text for s in composer.statements]
