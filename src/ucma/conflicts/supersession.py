"""Supersession from what is observed: each new episode's claims resolved at observe time.

``observe`` runs the rule extractor (``RuleFactExtractor.claims``, offline and
cheap) over every stored episode and hands the claims to the resolver in the
episode's own write transaction, so "Uma now works at Google" replaces "Uma
works at OpenAI" the moment it is observed, by seed 002's tree:

- a claim becomes a fact read from its episode (provenance ``inferred``; its
  ``metadata`` names the speaker as ``source``, the episode's provenance as
  ``evidence`` and whether the text says it is a change), valid from the date
  the text gives or else from when the episode happened;
- a negated claim ("Dana no longer likes coffee", "Dana left Acme") retracts
  the current fact it names;
- the resolver records what was replaced: facts keep their history
  (``superseded_by``, ``fact_history``, ``as_of``), an episode all of whose
  facts were replaced is recorded as wholly superseded; an episode with one
  claim still current is not.

Names: a claim about "Dana" is about "Dana Whitfield" when she is the only
person of the scope with that first name (``identify``); a claim about "Dana
Whitfield" also competes with what is held about a bare "Dana" unless another
"Dana ..." is known. Anything else stays as written.

Every new episode is also compared, as a statement, with the closest older
episodes (cosine at least ``MIN_COSINE``) by ``ucma.conflicts.statements``:
what it revises is superseded directly, whether or not a claim was read ("I
switched my laptop to Linux", "Greta went from 10 km to 5 km"); when two older
statements are about as plausible, the resolver records conflicts that ask the
user instead of guessing. An older message revised in only one of its sentences
is left for ``replace_in_part``, which keeps its other sentences as their own
episode once they are embedded. A statement marking a change is also compared
without the name of the person it shares with an older one: the engine finds
those pairs before the write (``earlier_statements``), embeds them and passes
the cosines in ``ObservedStatement.unnamed``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ucma.conflicts.resolver import ConflictResolver, facts_read_from, read_from
from ucma.conflicts.statements import (
    Candidate,
    echoes,
    names_value,
    replacements,
    without_value,
)
from ucma.memory.levels import select_temporal_level
from ucma.memory.retention import initial_stability
from ucma.people import spoken_name
from ucma.providers.rule_facts import GENERIC_SPEAKERS, Claim
from ucma.storage.base import Storage
from ucma.types import (
    Conflict,
    Episode,
    Fact,
    MemoryKind,
    RetentionInfo,
    Scope,
    fact_id_for,
)

__all__ = [
    "MIN_COSINE",
    "ObservedClaim",
    "ObservedStatement",
    "PartialReplacement",
    "apply_observed",
    "claim_fact",
    "earlier_statements",
    "identify",
    "known_names",
    "replace_in_part",
]

MIN_COSINE = 0.2
"""The least cosine at which an older statement is considered for replacement at all."""

ECHO_COSINE = 0.4
"""How close the assistant's reply to a replaced statement must be to go with it."""

_CANDIDATES = 24
_WINDOW = 2_000


@dataclass(frozen=True, slots=True)
class ObservedClaim:
    """A claim of a new episode, as the fact it asserts (or retracts), with the
    vector of that fact's content and the other names of its subject."""

    fact: Fact
    vector: np.ndarray
    negated: bool = False
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PartialReplacement:
    """An older statement of several sentences that a new one revises in part:
    ``rest`` is what stays current, verbatim."""

    old: Episode
    new: Episode
    rest: str
    reason: str


@dataclass(slots=True)
class ObservedStatement:
    """A new episode, its vector, and what was read from it. ``partial`` lists
    the older statements it replaces only in part, left for ``replace_in_part``."""

    episode: Episode
    vector: np.ndarray
    claims: list[ObservedClaim] = field(default_factory=list)
    partial: list[PartialReplacement] = field(default_factory=list)
    unnamed: dict[str, float] = field(default_factory=dict)
    """Older statements' cosines to this one without the person both name."""
    parts: dict[str, tuple[tuple[str, float], ...]] = field(default_factory=dict)
    """Of older messages compared sentence by sentence, each sentence's cosine."""


def identify(subject: str, known: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The name to record a claim about ``subject`` under, and its aliases.

    ``known`` are the names of the scope sharing ``subject``'s first word. A
    bare first name that exactly one known full name starts with is that
    person (aliases: the bare name). A full name is itself; the bare first
    name is its alias unless another full name with that first name is known.
    Lower-case subjects ("meeting") and "user" are never people's names.
    """
    words = subject.split()
    if not words or not subject[:1].isupper():
        return subject, ()
    first = words[0].lower()
    full = {n.lower(): n for n in known if len(n.split()) > 1 and n.split()[0].lower() == first}
    if len(words) == 1:
        if len(full) == 1:
            return next(iter(full.values())), (subject,)
        return subject, ()
    others = set(full) - {subject.lower()}
    return subject, (() if others else (words[0],))


def known_names(storage: Storage, scope: Scope, first_names: Sequence[str]) -> dict[str, list[str]]:
    """For each first name, the scope's fact subjects and episode participants
    that start with it (storage thread)."""
    wanted = {n.lower(): n for n in first_names}
    if not wanted:
        return {}
    found: dict[str, list[str]] = {key: [] for key in wanted}
    for key, name in wanted.items():
        found[key].extend(storage.conflicts.subject_names(scope, name))
    for person in storage.episodes.participants(scope):
        head = person.split()[0].lower() if person.split() else ""
        if head in found and person not in found[head]:
            found[head].append(person)
    return found


def claim_fact(
    scope: Scope, claim: Claim, episode: Episode, subject: str, now: float, extracted_by: str
) -> Fact:
    """The fact a claim asserts, read from ``episode`` and recorded under ``subject``."""
    raw = claim.fact
    content = raw.content
    # "Nadia" read as "Nadia Okafor" is written so; read as "Nadia (my cousin)", the
    # text keeps its "Nadia" (the relation is the record's, not something said).
    spoken = spoken_name(subject)
    if spoken != raw.subject and content.startswith(raw.subject):
        content = spoken + content[len(raw.subject) :]
    return Fact(
        id=fact_id_for(scope, subject, raw.predicate, raw.object),
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        content=content,
        provenance=raw.provenance,
        # As lasting as the statement it restates, unless its own words say otherwise.
        temporal_level=select_temporal_level(content, "fact", default=episode.temporal_level),
        base_salience=episode.base_salience,
        created_at=now,
        updated_at=now,
        metadata={
            "extracted_by": extracted_by,
            "source": episode.source,
            "evidence": episode.provenance.value,
            "change": claim.change,
        },
        subject=subject,
        predicate=raw.predicate,
        object=raw.object,
        confidence=raw.confidence,
        source_episode_ids=[episode.id],
        last_verified=now,
        valid_from=raw.valid_from if raw.valid_from is not None else episode.timestamp,
        recorded_at=now,
    )


def apply_observed(
    resolver: ConflictResolver,
    storage: Storage,
    scope: Scope,
    statements: Sequence[ObservedStatement],
    edge_weight: float,
    now: float,
) -> list[Conflict]:
    """Resolve the claims of newly written episodes against the scope (storage
    thread, inside the episodes' write transaction). Returns the conflicts
    recorded or settled. A new fact's forgetting starts at its temporal level's
    stability (R19)."""
    conflicts: list[Conflict] = []
    # The scope's people, read once for the batch (its own episodes are written).
    speakers = frozenset(storage.episodes.participants(scope)) - GENERIC_SPEAKERS
    for statement in statements:
        episode = statement.episode
        positive = [c for c in statement.claims if not c.negated]
        for claim in positive:
            result = resolver.assert_fact(
                storage,
                scope,
                claim.fact,
                claim.vector,
                [episode.id],
                edge_weight,
                RetentionInfo("", initial_stability(claim.fact.temporal_level), now, 0),
                now,
                aliases=claim.aliases,
            )
            conflicts.extend(result.conflicts)
        for claim in statement.claims:
            if claim.negated:
                fact = claim.fact
                resolver.retract(
                    storage,
                    scope,
                    fact.subject,
                    fact.predicate,
                    fact.object,
                    episode.id,
                    now,
                    aliases=claim.aliases,
                )
        # What the claims replaced, read once: the statement comparison below adds
        # only conflicts between episodes, which hold no replaced fact.
        replaced = _replaced_facts(storage, scope, episode, conflicts)
        _replace_echoes_of_claims(resolver, storage, scope, episode, replaced, now)
        conflicts.extend(_replace_statements(resolver, storage, scope, statement, speakers, now))
        _replace_read_from(storage, scope, statement, replaced, now)
    return conflicts


def _replaced_facts(
    storage: Storage, scope: Scope, new: Episode, conflicts: Sequence[Conflict]
) -> list[tuple[Conflict, Fact]]:
    """The facts that a claim of ``new`` replaced, with the conflict that says so,
    among ``conflicts``: no longer current, beaten by a current fact read from ``new``."""
    replaced = []
    for conflict in conflicts:
        if conflict.new_fact_id is None:
            continue
        found = storage.memories.get_many(scope, [conflict.existing_fact_id, conflict.new_fact_id])
        loser, winner = found.get(conflict.existing_fact_id), found.get(conflict.new_fact_id)
        if not isinstance(loser, Fact) or not isinstance(winner, Fact):
            continue
        if loser.is_current or not winner.is_current or new.id not in winner.source_episode_ids:
            continue
        replaced.append((conflict, loser))
    return replaced


def _replace_echoes_of_claims(
    resolver: ConflictResolver,
    storage: Storage,
    scope: Scope,
    new: Episode,
    replaced: Sequence[tuple[Conflict, Fact]],
    now: float,
) -> None:
    """The assistant's echoes of the messages ``new``'s claims wholly replaced
    (``replaced``: ``_replaced_facts``; "Okay, I'll remember you live in Tallinn"
    after "I've been based in Tallinn since uni", which "Unpacking boxes in our new
    place in Krakow" replaced) go with them, as they do when a statement replaces a
    statement."""
    for _, loser in replaced:
        sources = [i for i in loser.source_episode_ids if i != new.id]
        gone = storage.conflicts.superseded(scope, sources, at=now)
        olds = storage.memories.get_many(scope, [i for i in sources if i in gone])
        for old in olds.values():
            if isinstance(old, Episode) and old.timestamp <= new.timestamp:
                _replace_echo(resolver, storage, scope, old, new, now)


def _replace_read_from(
    storage: Storage,
    scope: Scope,
    statement: ObservedStatement,
    replaced: Sequence[tuple[Conflict, Fact]],
    now: float,
) -> None:
    """The older messages that a fact the new statement's claims replaced
    (``replaced``: ``_replaced_facts``) was read from, where other sentences still
    say something current ("My neighbour Jordan lives in Lisbon. Also: My neighbour
    Jordan listens to flamenco nonstop." after "Jordan has a place in Denver"): the
    resolver leaves such a message standing, so it is replaced in part, its
    sentences naming the replaced value becoming history (``statement.partial``,
    for ``replace_in_part``)."""
    new = statement.episode
    done = {item.old.id for item in statement.partial}
    for conflict, loser in replaced:
        sources = [i for i in loser.source_episode_ids if i != new.id and i not in done]
        gone = storage.conflicts.superseded(scope, sources, at=now)
        olds = storage.memories.get_many(scope, [i for i in sources if i not in gone])
        for old in olds.values():
            if not isinstance(old, Episode) or old.timestamp > new.timestamp:
                continue
            rest = without_value(old.content, loser.object)
            if rest is None:
                continue
            reason = (
                f"a later statement replaces '{loser.subject} {loser.predicate} {loser.object}' "
                f"in it (fact {conflict.id})"
            )
            statement.partial.append(PartialReplacement(old, new, rest, reason))
            done.add(old.id)


def _replace_statements(
    resolver: ConflictResolver,
    storage: Storage,
    scope: Scope,
    statement: ObservedStatement,
    speakers: frozenset[str],
    now: float,
) -> list[Conflict]:
    """Supersede the older statements ``statement`` revises (``ucma.conflicts.statements``),
    or ask the user when two older values are about as plausible. ``speakers``
    are the scope's participants that are people."""
    new = statement.episode
    earlier = earlier_statements(storage, scope, statement.vector, now)
    found = {older.id: older for older, _ in earlier}
    candidates = [
        Candidate(
            older.id,
            older.content,
            older.source,
            older.timestamp,
            score,
            statement.unnamed.get(older.id),
            statement.parts.get(older.id, ()),
        )
        for older, score in earlier
        if older.id != new.id
    ]
    if not candidates:
        return []
    named = [name for claim in statement.claims for name in (claim.fact.subject, *claim.aliases)]
    people = {*speakers, *(n for n in named if n[:1].isupper())}
    replaced, ambiguous = replacements(new.content, new.source, new.timestamp, candidates, people)
    # A statement whose claims name the one-value attribute it is about ("Yusuf eats
    # strictly gluten-free": diet) does not replace one whose claims name others
    # ("Yusuf's go-to drink is a flat white"), however alike the two read.
    attributes = {
        c.fact.predicate
        for c in statement.claims
        if not c.negated and resolver.registry.is_functional(c.fact.predicate)
    }
    if attributes:
        replaced = [
            r
            for r in replaced
            if not _about_other_attributes(storage, scope, r.candidate.id, attributes)
        ]
        ambiguous = [
            c for c in ambiguous if not _about_other_attributes(storage, scope, c.id, attributes)
        ]
        if len(ambiguous) < 2:
            ambiguous = []
    new = _lasting_as_replaced(
        storage, scope, statement, [found[r.candidate.id] for r in replaced], now
    )
    for replacement in replaced:
        old = found[replacement.candidate.id]
        reason = (
            f"a later statement replaces it ({replacement.evidence}, "
            f"cosine {replacement.candidate.cosine:.2f})"
        )
        if replacement.rest is None:
            resolver.supersede_statement(storage, scope, old, new, reason, now)
            _replace_echo(resolver, storage, scope, old, new, now)
        else:
            statement.partial.append(PartialReplacement(old, new, replacement.rest, reason))
    if not ambiguous:
        return []
    best, rival = ambiguous[0], ambiguous[1]
    reason = (
        f"'{new.content}' may replace '{best.text}' or '{rival.text}' "
        f"(cosines {best.cosine:.2f} and {rival.cosine:.2f})"
    )
    asked = []
    for option in ambiguous:
        old = found[option.id]
        asked.append(resolver.ask_between_statements(storage, scope, old, new, reason, now))
    return asked


def _lasting_as_replaced(
    storage: Storage,
    scope: Scope,
    statement: ObservedStatement,
    olds: Sequence[Episode],
    now: float,
) -> Episode:
    """A statement that replaces others is of their temporal level when its own
    words give it a lower one, its forgetting starting there: the new value of a
    lasting attribute ("Switched to learning Swahili." after "I'm learning
    Portuguese on my commute.") lasts as the old one did, rather than being
    forgotten in days while the value it replaced stays on record. Returns the
    statement's episode as stored (also set on ``statement``)."""
    new = statement.episode
    level = max((old.temporal_level for old in olds), default=new.temporal_level)
    if level <= new.temporal_level:
        return new
    statement.episode = dataclasses.replace(new, temporal_level=level)
    storage.episodes.update(statement.episode)
    storage.retention.put_many(scope, [RetentionInfo(new.id, initial_stability(level), now, 0)])
    return statement.episode


def _about_other_attributes(
    storage: Storage, scope: Scope, episode_id: str, attributes: set[str]
) -> bool:
    """Whether facts were read from the episode and none of them is about one of
    ``attributes`` (predicates)."""
    predicates = {f.predicate for f in facts_read_from(storage, scope, episode_id)}
    return bool(predicates) and not predicates & attributes


def _replace_echo(
    resolver: ConflictResolver,
    storage: Storage,
    scope: Scope,
    old: Episode,
    new: Episode,
    now: float,
) -> None:
    """Supersede the assistant's reply right after ``old`` when it only repeated
    the value ``new`` replaced ("Okay, I'll keep Thursday evenings free" after
    "Thursday evenings are for climbing"): otherwise the old value lives on in
    the reply."""
    if old.said_by("assistant"):
        return
    after = [
        i
        for i, offset in storage.episodes.neighbors(scope, [old.id], 1).get(old.id, [])
        if offset == 1
    ]
    found = storage.memories.get_many(scope, after)
    reply = found.get(after[0]) if after else None
    if (
        not isinstance(reply, Episode)
        or not reply.said_by("assistant")
        or reply.timestamp > new.timestamp
        or storage.conflicts.superseded(scope, [reply.id], at=now)
        or not echoes(reply.content, old.content, new.content)
    ):
        return
    vectors = storage.memories.vectors(scope, [old.id, reply.id])
    if len(vectors) < 2 or float(np.dot(vectors[old.id], vectors[reply.id])) < ECHO_COSINE:
        return
    reason = f"it repeated what a later statement replaced ('{old.content}')"
    resolver.supersede_statement(storage, scope, reply, new, reason, now)


def earlier_statements(
    storage: Storage, scope: Scope, vector: np.ndarray, now: float
) -> list[tuple[Episode, float]]:
    """The live, current episodes closest to ``vector`` among the scope's latest
    (``_CANDIDATES`` of the newest ``_WINDOW``, cosine at least ``MIN_COSINE``),
    with their cosines: what a new statement is compared with (storage thread)."""
    [scored] = storage.memories.vector_search_latest(
        scope,
        vector.reshape(1, -1),
        _CANDIDATES,
        window=_WINDOW,
        kinds=[MemoryKind.EPISODIC],
        min_score=MIN_COSINE,
    )
    found = storage.memories.get_many(scope, [memory_id for memory_id, _ in scored])
    gone = storage.conflicts.superseded(scope, list(found), at=now)
    return [
        (older, score)
        for memory_id, score in scored
        if memory_id not in gone and isinstance(older := found.get(memory_id), Episode)
    ]


def replace_in_part(
    resolver: ConflictResolver,
    storage: Storage,
    scope: Scope,
    partial: Sequence[PartialReplacement],
    rests: Sequence[Episode],
    vectors: np.ndarray,
    retention: Sequence[RetentionInfo],
    now: float,
    *,
    abstracted: bool,
) -> None:
    """Supersede each older statement that a new one revised in part, keeping
    what stays current as its own episode (``rests``, one per replacement, with
    their vectors and retention), in one transaction (storage thread). The old
    statement stays as history, superseded by the new one; its rest records
    where it came from (``metadata["rest_of"]``), and the facts read from the old
    statement that the rest still says are read from the rest too, so a later
    value replacing one of them replaces the rest with it. ``abstracted``: the
    rests count as read by sleep's abstraction (its rules are those that read
    the old statements' facts), so it does not read them again."""
    with storage.transaction():
        storage.episodes.add(list(rests), vectors)
        storage.retention.put_many(scope, list(retention))
        if abstracted:
            storage.lifecycle.mark_abstracted(scope, [r.id for r in rests], now)
        for item, rest in zip(partial, rests, strict=True):
            _read_from_rest(storage, scope, item.old, rest, now)
            resolver.supersede_statement(storage, scope, item.old, item.new, item.reason, now)


def _read_from_rest(
    storage: Storage, scope: Scope, old: Episode, rest: Episode, now: float
) -> None:
    """Each current fact read from ``old`` whose value ``rest`` names is read from
    ``rest`` too (a source episode, and an edge weighted as its edge to ``old``):
    it stays current when ``old`` is superseded, and goes with ``rest`` later."""
    still = [
        (fact, edge)
        for fact, edge in read_from(storage, scope, old.id)
        if fact.is_current and names_value(rest.content, fact.object)
    ]
    for fact, _ in still:
        sources = [*fact.source_episode_ids, rest.id]
        storage.facts.update(dataclasses.replace(fact, source_episode_ids=sources))
    storage.graph.add_edges(
        scope, [dataclasses.replace(edge, target_id=rest.id, created_at=now) for _, edge in still]
    )
