"""Writing what happens: observations, sessions and deletion."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ucma.conflicts.statements import (
    marks_change,
    shared_people,
    stated_sentences,
    states_lasting,
)
from ucma.conflicts.supersession import (
    ObservedClaim,
    ObservedStatement,
    PartialReplacement,
    apply_observed,
    claim_fact,
    earlier_statements,
    identify,
    known_names,
    replace_in_part,
)
from ucma.engine.base import EngineBase, _enum, _initial_retention, _new_id, _provenance
from ucma.errors import NotFoundError, ValidationError
from ucma.lifecycle.dedup import find_duplicates, merge_duplicates
from ucma.memory.importance import classify_importance
from ucma.memory.levels import (
    CONTENT_TYPES,
    SALIENCE_STRONG,
    initial_salience,
    select_temporal_level,
)
from ucma.memory_ids import new_memory_id
from ucma.paradigms.evidence import PreferenceClaim, StatedOpinion, apply_statements
from ucma.paradigms.opinions import PREFERENCE_PREDICATES
from ucma.people import known_people, without_people, without_relations
from ucma.providers.rule_facts import Claim, RuleFactExtractor
from ucma.retrieval.name_free import name_free_texts
from ucma.storage.base import Storage
from ucma.types import (
    Bank,
    Episode,
    Fact,
    GraphEdge,
    Observation,
    Opinion,
    Provenance,
    Scope,
    Tier,
)
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_metadata,
    check_strings,
    check_timestamp,
)

__all__ = ["EpisodeWrites"]

STATED_ATTRIBUTE_LEVEL = 3
"""The temporal level of an observation that states a lasting attribute (seed 003 R1)."""

logger = logging.getLogger(__name__)

# What an observation may carry (observe's keyword arguments, observe_many's keys).
_OBSERVED = (
    "content",
    "source",
    "timestamp",
    "metadata",
    "session_id",
    "tags",
    "participants",
    "provenance",
    # The store step steered by the caller (seed 003 R1, R2; seed 000 banks):
    # heuristics decide whatever is left None.
    "content_type",
    "temporal_level",
    "salience",
    "bank",
)
_OBSERVE_KEYS = frozenset(_OBSERVED)


_RULES = RuleFactExtractor()


class _Prepared:
    """A validated observation waiting to be embedded and written; ``claims`` are
    the facts it asserts or retracts, ``aliases`` their subjects' other names;
    ``unnamed`` older statements' cosines to it without a person both name, and
    ``parts`` those of each sentence of an older message of several."""

    __slots__ = tuple(
        dict.fromkeys(
            (
                "id",
                *_OBSERVED,
                "base_importance",
                "claims",
                "facts",
                "unnamed",
                "parts",
                "level_given",
                "salience_given",
                "bank_given",
                "opinion",
            )
        )
    )

    # What ``retain`` says of an opinion it stores: (topic, confidence), either None.
    opinion: tuple[str | None, float | None] | None
    id: str
    content: str
    session_id: str
    timestamp: float

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)


@dataclass(slots=True)
class _Staged:
    """Observations validated, guarded and embedded, waiting for their write:
    ``stored`` those important enough, ``vectors`` theirs and then their facts'."""

    prepared: list[_Prepared]
    stored: list[_Prepared]
    vectors: np.ndarray | None = None


@dataclass(frozen=True, slots=True)
class _Written:
    """What a write of observations did: {duplicate id: existing id}, the older
    statements revised in part, the opinions formed or moved."""

    merged: dict[str, str]
    partial: list[PartialReplacement]
    opinions: list[Opinion]


class EpisodeWrites(EngineBase):
    """observe / observe_many (validated, embedded in one batch, de-duplicated, written in one
    transaction), sessions and delete."""

    # -- writes -------------------------------------------------------------------

    async def observe(
        self,
        content: str,
        *,
        source: str = "user",
        timestamp: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        participants: Sequence[str] | None = None,
        provenance: Provenance | str | None = None,
        content_type: str | None = None,
        temporal_level: int | None = None,
        salience: float | None = None,
        bank: Bank | str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Observation:
        """Observe one input; store it as an episode if it is important enough.

        ``timestamp`` is when the event happened (default now), so history can
        be imported; ``source`` is who or what produced it ("user", "tool_result",
        a speaker's name ...). Returns what was done with it.

        The store step is heuristic unless the caller says otherwise (seed 003 R1,
        R2): ``content_type`` (fact, preference, event, goal, observation) is read
        for the temporal level, ``temporal_level`` (1 to 4) sets it outright,
        ``salience`` in [0, 1] is the starting salience (and the importance the
        storage threshold sees), ``bank`` the bank (default: ``opinion`` for a
        stated preference, else ``experience``).
        """
        item = {
            "content": content,
            "source": source,
            "timestamp": timestamp,
            "metadata": metadata,
            "session_id": session_id,
            "tags": tags,
            "participants": participants,
            "provenance": provenance,
            "content_type": content_type,
            "temporal_level": temporal_level,
            "salience": salience,
            "bank": bank,
        }
        [observation] = await self.observe_many([item], user_id=user_id, agent_id=agent_id)
        return observation

    async def observe_many(
        self,
        items: Sequence[str | Mapping[str, Any]],
        *,
        source: str = "user",
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Observation]:
        """Observe a batch: one embedding call and one transaction for all of it.

        Items are strings or mappings with ``observe``'s keyword arguments. The
        batch is validated whole before anything happens, and written whole or
        not at all.
        """
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        if isinstance(items, str | bytes) or not isinstance(items, Sequence):
            raise ValidationError("items must be a list of strings or mappings")
        if len(items) > limits.max_batch_size:
            raise ValidationError(
                f"batch of {len(items)} items; the limit is {limits.max_batch_size}"
            )
        now = self._clock()
        prepared = [self._prepare_observation(item, source, scope, now) for item in items]
        return await self._store_observations(scope, prepared, now)

    async def _store_observations(
        self, scope: Scope, prepared: list[_Prepared], now: float
    ) -> list[Observation]:
        """Guard, embed and write validated observations (``observe_many``, ``retain``)."""
        staged = await self._stage_observations(scope, prepared, now)
        storage = await self._ready()
        written = await self._run(self._write_staged, storage, scope, staged, now)
        return await self._settle_observations(scope, staged, written, now)

    async def _stage_observations(
        self, scope: Scope, prepared: list[_Prepared], now: float
    ) -> _Staged:
        """Everything before the write: the content guard, the sensory buffer, the
        claims read and the vectors (the store step's cuts and the write are separate
        so ``post_interaction`` can write observations inside its own transaction)."""
        await self._guard_items(scope, prepared)  # type: ignore[attr-defined] # engine/privacy.py
        for p in prepared:
            await self.sensory.ingest(p.content, p.source, metadata={"memory_id": p.id})
        threshold = self.config.episodic.min_importance_to_store
        stored = [p for p in prepared if p.base_importance > threshold]
        staged = _Staged(prepared, stored)
        if stored:
            storage = await self._ready()
            await self._read_claims(storage, scope, stored, now)
            facts = [fact for p in stored for fact, _, _ in p.facts]
            vectors = await self._embed([p.content for p in stored] + [f.content for f in facts])
            await self._embed_name_free(stored)
            await self._compare_unnamed(storage, scope, stored, vectors, now)
            staged.vectors = vectors
        return staged

    def _write_staged(
        self, storage: Storage, scope: Scope, staged: _Staged, now: float
    ) -> _Written:
        """Write staged observations (storage thread; inside the caller's transaction
        when there is one)."""
        if not staged.stored:
            return _Written({}, [], [])
        count = len(staged.stored)
        assert staged.vectors is not None
        return self._write_episodes(
            storage, scope, staged.stored, staged.vectors[:count], now, staged.vectors[count:]
        )

    async def _settle_observations(
        self, scope: Scope, staged: _Staged, written: _Written, now: float
    ) -> list[Observation]:
        """What follows a write: statements revised in part, standing instructions,
        the sessions' last episodes and the goals the new text may contradict."""
        stored, merged = staged.stored, written.merged
        if stored:
            storage = await self._ready()
            if written.partial:
                await self._replace_in_part(storage, scope, written.partial, now)
            kept = [(p.id, p.content) for p in stored if p.id not in merged]
            await self._note_instructions(scope, kept)  # type: ignore[attr-defined] # engine/retrieval.py
            for p in stored:
                self._last_episode[(scope, p.session_id)] = merged.get(p.id, p.id)
            said = [p.content for p in stored]
            await self._reconcile_goals(scope, said)  # type: ignore[attr-defined] # engine/goals.py
        threshold = self.config.episodic.min_importance_to_store
        logger.info(
            "observe: %d items, %d stored, %d merged (user=%s)",
            len(staged.prepared),
            len(stored) - len(merged),
            len(merged),
            scope.user_id,
        )
        return [
            Observation(
                id=merged.get(p.id, p.id),
                stored=p.base_importance > threshold,
                importance=p.base_importance,
                temporal_level=p.temporal_level,
                merged_into=merged.get(p.id),
            )
            for p in staged.prepared
        ]

    async def _embed_name_free(self, batch: Sequence[_Prepared]) -> None:
        """Embed, into the derived-vector caches, how each observation and the facts
        read from it read without a person it names: a recall naming them compares
        them so (``retrieval/name_free.py``) and then finds the vectors cached
        instead of computing them, in this process or (through the persistent
        cache) another."""
        if self.config.retrieval.name_free_weight <= 0:
            return
        texts: set[str] = set()
        for p in batch:
            names = known_people([p.content]) | _named(p)
            for content in (p.content, *(fact.content for fact, _, _ in p.facts)):
                texts |= name_free_texts(content, names)
        if texts:
            await self._embed_derived(sorted(texts))

    async def _compare_unnamed(
        self,
        storage: Storage,
        scope: Scope,
        batch: Sequence[_Prepared],
        vectors: np.ndarray,
        now: float,
    ) -> None:
        """For each observation that marks a change, its cosines to the older
        statements it will be compared with (``earlier_statements``) with the
        people both name put as a pronoun
        (``ucma.conflicts.statements``): "Greta switched to a Moto Edge 40"
        against "Greta uses an iPhone 13" says what changed better without the
        name they share. An older message of several sentences is compared
        sentence by sentence ("Mateo got a new OnePlus 11" is about "Mateo has an
        iPhone 15", not "My boss Mateo runs 21 km most days"). Sets ``unnamed``
        (the closest sentence's cosine) and ``parts``."""
        compared = [i for i, p in enumerate(batch) if marks_change(p.content)]
        if not compared:
            return
        earlier = await self._run(
            lambda: [earlier_statements(storage, scope, vectors[i], now) for i in compared]
        )
        pairs: list[tuple[_Prepared, str, str, list[str], list[str]]] = []
        for i, found in zip(compared, earlier, strict=True):
            p = batch[i]
            named = _named(p)
            for older, _ in found:
                names = shared_people(p.content, older.content, named)
                sentences = stated_sentences(older.content)
                if not names and (len(sentences) < 2 or known_people([older.content])):
                    # The plain cosine says it already, or they are about different people.
                    continue
                if not sentences:
                    sentences = [older.content]
                new_text = without_people(p.content, names) if names else p.content
                old_texts = [without_people(s, names) if names else s for s in sentences]
                pairs.append((p, older.id, new_text, sentences, old_texts))
        if not pairs:
            return
        texts = list(dict.fromkeys(t for _, _, new, _, olds in pairs for t in (new, *olds)))
        embedded = dict(zip(texts, await self._embed_derived(texts), strict=True))
        for p, older_id, new, sentences, olds in pairs:
            cosines = [float(np.dot(embedded[new], embedded[old])) for old in olds]
            p.unnamed[older_id] = max(cosines)
            p.parts[older_id] = tuple(zip(sentences, cosines, strict=True))

    async def _read_claims(
        self, storage: Storage, scope: Scope, batch: Sequence[_Prepared], now: float
    ) -> None:
        """Read each observation's claims with the rule extractor and the facts
        they assert, under the names the scope knows its people by
        (``ucma.conflicts.supersession``). Sets ``claims`` and ``facts``."""
        firsts: set[str] = set()
        for p in batch:
            p.claims = _RULES.claims(p.content, speaker=p.source, reference_time=p.timestamp)
            firsts.update(c.fact.subject.split()[0] for c in p.claims if c.fact.subject.strip())
        names = await self._run(known_names, storage, scope, sorted(firsts)) if firsts else {}
        for p in batch:
            if not p.bank_given and any(
                c.fact.predicate in PREFERENCE_PREDICATES for c in p.claims if not c.negated
            ):
                p.bank = Bank.OPINION  # a stated preference: an opinion of its holder
            if not p.level_given and _states_attribute(p):
                # It states a lasting attribute ("Greta runs 10 km most days"), not
                # a passing remark: months of decay (R1 level 3) unless it says
                # otherwise, and the salience of a strong observation with evidence
                # (R2), so compression keeps it when many episodes expire together.
                p.temporal_level = select_temporal_level(
                    p.content, "fact", default=STATED_ATTRIBUTE_LEVEL
                )
                if not p.salience_given:
                    p.salience = max(p.salience, SALIENCE_STRONG)
            episode = self._episode(scope, p, now)
            p.facts = []
            for claim in p.claims:
                first = claim.fact.subject.split()[0].lower() if claim.fact.subject.split() else ""
                subject, aliases = identify(claim.fact.subject, names.get(first, []))
                fact = claim_fact(scope, claim, episode, subject, now, type(_RULES).__name__)
                if fact.predicate in PREFERENCE_PREDICATES:
                    fact.bank = Bank.OPINION
                p.facts.append((fact, claim, aliases))

    def _prepare_observation(
        self, item: str | Mapping[str, Any], default_source: str, scope: Scope, now: float
    ) -> _Prepared:
        if isinstance(item, str):
            fields: Mapping[str, Any] = {"content": item}
        elif isinstance(item, Mapping):
            unknown = set(item) - _OBSERVE_KEYS
            if unknown:
                raise ValidationError(f"unknown observation fields: {sorted(unknown)}")
            fields = item
        else:
            raise ValidationError(
                f"an observation must be a string or mapping, got {type(item).__name__}"
            )
        limits = self.config.limits
        content = check_content(fields.get("content"), limits)
        source = fields.get("source") or default_source
        if not isinstance(source, str) or not source.strip() or len(source) > 256:
            raise ValidationError("source must be a non-empty string of at most 256 characters")
        ts = fields.get("timestamp")
        timestamp = now if ts is None else check_timestamp(ts)
        session = fields.get("session_id")
        session_id = (
            check_id(session, "session_id")
            if session is not None
            else (self._sessions.setdefault(scope, _new_id("ses")))
        )
        provenance = _provenance(fields.get("provenance"), Provenance.OBSERVED)
        importance = classify_importance(content, source)
        content_type = fields.get("content_type")
        if content_type is not None and content_type not in CONTENT_TYPES:
            raise ValidationError(
                f"content_type must be one of: {', '.join(sorted(CONTENT_TYPES))}; "
                f"got {content_type!r}"
            )
        level = select_temporal_level(content, content_type or "observation")
        given_level = fields.get("temporal_level")
        if given_level is not None:
            if isinstance(given_level, bool) or given_level not in (1, 2, 3, 4):
                raise ValidationError(f"temporal_level must be 1, 2, 3 or 4; got {given_level!r}")
            level = int(given_level)
        given_salience = fields.get("salience")
        if given_salience is not None:
            given_salience = check_fraction(given_salience, "salience")
            importance = given_salience  # DESIGN.md: importance is base salience
        bank = fields.get("bank")
        participants = check_strings(fields.get("participants"), "participants") or [source]
        return _Prepared(
            id=new_memory_id("ep", scope),
            content=content,
            source=source,
            timestamp=timestamp,
            metadata=check_metadata(fields.get("metadata"), limits),
            session_id=session_id,
            tags=check_strings(fields.get("tags"), "tags"),
            participants=participants,
            provenance=provenance,
            base_importance=importance,
            temporal_level=level,
            salience=(
                initial_salience(content, provenance.value, importance)
                if given_salience is None
                else given_salience
            ),
            claims=[],
            facts=[],
            unnamed={},
            parts={},
            level_given=given_level is not None or content_type is not None,
            salience_given=given_salience is not None,
            bank_given=bank is not None,
            bank=Bank.EXPERIENCE if bank is None else _enum(Bank, bank, "bank"),
            opinion=None,
        )

    def _session_edges(
        self,
        storage: Storage,
        scope: Scope,
        batch: Sequence[_Prepared],
        merged: Mapping[str, str],
    ) -> list[GraphEdge]:
        """``followed_by`` edges between consecutive episodes of a session (a merged
        duplicate stands for the episode it reinforced). The episode a session's
        first item follows is the last this engine stored in it, or, when the engine
        has not seen the session lately (``_last_episode`` keeps the recent ones), the
        session's newest in storage (storage thread)."""
        weight = self.config.graph.session_edge_weight
        last: dict[tuple[Scope, str], str | None] = {}
        edges = []
        for p in batch:
            key = (scope, p.session_id)
            current = merged.get(p.id, p.id)
            if key not in last:
                last[key] = self._last_episode.get(key) or storage.episodes.last_of_session(
                    scope, p.session_id
                )
            previous = last[key]
            if previous is not None and previous != current:
                edges.append(GraphEdge(previous, current, "followed_by", weight, p.timestamp))
            last[key] = current
        return edges

    @staticmethod
    def _episode(scope: Scope, p: _Prepared, now: float) -> Episode:
        return Episode(
            id=p.id,
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=p.content,
            provenance=p.provenance,
            temporal_level=p.temporal_level,
            base_salience=p.salience,
            created_at=now,
            updated_at=now,
            metadata=p.metadata,
            session_id=p.session_id,
            timestamp=p.timestamp,
            source=p.source,
            participants=p.participants,
            tags=p.tags,
            bank=p.bank,
        )

    def _rules_read_on_sleep(self) -> bool:
        """Whether sleep's abstraction would read facts with the same rules that
        observe applied already (then the episodes are marked abstracted, so the
        same statement is not counted twice)."""
        if self._providers is not None:
            return isinstance(self._providers.fact_extractor, RuleFactExtractor)
        return self.config.consolidation.llm == "heuristic"

    def _write_episodes(
        self,
        storage: Storage,
        scope: Scope,
        all_items: Sequence[_Prepared],
        all_vectors: np.ndarray,
        now: float,
        fact_vectors: np.ndarray | None = None,
    ) -> _Written:
        """Write a batch in one transaction; near-duplicates (R4, ``ucma.lifecycle.dedup``)
        reinforce what they duplicate instead. Returns {duplicate id: existing id},
        the older statements the new ones revise only in part and the opinions changed.

        In the same transaction, the claims read from each new episode are
        resolved against the scope (``ucma.conflicts.supersession``): what they
        replace is superseded, with its history kept. ``fact_vectors`` are the
        vectors of the items' ``facts``, in order."""
        duplicates = find_duplicates(
            storage,
            scope,
            [p.id for p in all_items],
            [p.content for p in all_items],
            [p.source for p in all_items],
            all_vectors,
            self.config.episodic.duplicate_similarity,
            window=self.config.episodic.duplicate_window,
        )
        merged = {d.attempted_id: d.existing_id for d in duplicates}
        keep = [i for i, p in enumerate(all_items) if p.id not in merged]
        batch = [all_items[i] for i in keep]
        vectors = all_vectors[keep]
        edges = self._session_edges(storage, scope, all_items, merged)
        episodes = [self._episode(scope, p, now) for p in batch]
        statements = self._statements(all_items, all_vectors, merged, fact_vectors, scope, now)
        with storage.transaction():
            storage.episodes.add(episodes, vectors)
            storage.retention.put_many(scope, [_initial_retention(e, now) for e in episodes])
            if edges:
                storage.graph.add_edges(scope, edges)
            merge_duplicates(
                storage, scope, duplicates, now, self.config.forgetting.stability_boost_base
            )
            conflicts = apply_observed(
                self._resolver,
                storage,
                scope,
                statements,
                self.config.graph.evidence_edge_weight,
                now,
            )
            if statements and self._rules_read_on_sleep():
                storage.lifecycle.mark_abstracted(scope, [s.episode.id for s in statements], now)
            opinions = apply_statements(
                storage,
                scope,
                [_stated(p) for p in batch],
                merged,
                {p.id: p.content for p in all_items if p.id in merged},
                self.config.opinions,
                now,
            )
        if conflicts:
            logger.info("observe: %d conflicts recorded or settled", len(conflicts))
        # A statement that replaced others takes their level (supersession.py).
        levels = {s.episode.id: s.episode.temporal_level for s in statements}
        for p in batch:
            p.temporal_level = levels.get(p.id, p.temporal_level)
        self._names.pop(scope, None)
        return _Written(merged, [item for s in statements for item in s.partial], opinions)

    async def _replace_in_part(
        self, storage: Storage, scope: Scope, partial: Sequence[PartialReplacement], now: float
    ) -> None:
        """Older statements that new ones revised in part: each is superseded and
        what stays current of it becomes its own episode, verbatim, with the old
        one's time, speaker and session (a second transaction after the new
        episodes': until it commits, the old statement stands whole)."""
        rests = [
            replace(
                item.old,
                id=new_memory_id("ep", scope),
                content=item.rest,
                created_at=now,
                updated_at=now,
                metadata={**item.old.metadata, "rest_of": item.old.id},
                summary=None,
                tier=Tier.SHORT_TERM,
            )
            for item in partial
        ]
        vectors = await self._embed([r.content for r in rests])
        await self._run(
            replace_in_part,
            self._resolver,
            storage,
            scope,
            partial,
            rests,
            vectors,
            [_initial_retention(r, now) for r in rests],
            now,
            abstracted=self._rules_read_on_sleep(),
        )

    def _statements(
        self,
        items: Sequence[_Prepared],
        vectors: np.ndarray,
        merged: Mapping[str, str],
        fact_vectors: np.ndarray | None,
        scope: Scope,
        now: float,
    ) -> list[ObservedStatement]:
        """The kept (not merged) items as statements with their claims' facts."""
        statements = []
        offset = 0
        for i, p in enumerate(items):
            facts: list[tuple[Fact, Claim, tuple[str, ...]]] = p.facts
            rows = range(offset, offset + len(facts))
            offset += len(facts)
            if p.id in merged or fact_vectors is None:
                continue
            claims = [
                ObservedClaim(fact, fact_vectors[row], claim.negated, aliases)
                for row, (fact, claim, aliases) in zip(rows, facts, strict=True)
            ]
            statements.append(
                ObservedStatement(
                    self._episode(scope, p, now),
                    vectors[i],
                    claims,
                    unnamed=p.unnamed,
                    parts=p.parts,
                )
            )
        return statements

    async def new_session(self, *, user_id: str | None = None, agent_id: str | None = None) -> str:
        """Start a new session: clear the active and staging zones of working memory,
        then consolidate the scope as ``ConsolidationConfig.on_new_session`` says.

        With the default ``"background"`` this returns at once: a sleep cycle runs
        as an asyncio task (``consolidation_task``; await it when you need its
        facts), one per scope at a time. A new session requested while one runs is
        not lost: the task runs one more cycle when it finishes. A failure is logged
        (and raised by awaiting the task); ``close()`` lets a running cycle finish
        its current phase. ``"sync"`` consolidates before returning; ``"off"`` skips."""
        scope = self._scope(user_id, agent_id)
        old = self._sessions.get(scope)
        self._sessions[scope] = new = _new_id("ses")
        working = self.working_memory(user_id=scope.user_id, agent_id=scope.agent_id)
        cleared = working.clear_zone("active") + working.clear_zone("staging")
        logger.info("new_session %s (was %s), cleared %d working items", new, old, cleared)
        await self._consolidate_on_new_session(scope)
        return new

    async def delete(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> None:
        """Delete a memory and everything hanging off it; NotFoundError if unknown.
        Its decision traces and salience history stay (they are history); the
        event log records ``memory.deleted``."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        if not await self._run(storage.memories.delete, scope, check_id(memory_id)):
            raise NotFoundError("memory", memory_id)
        logger.info("delete: %s", memory_id)


def _stated(p: _Prepared) -> StatedOpinion:
    """A kept observation as evidence about opinions (``ucma.paradigms.evidence``)."""
    claims = [
        PreferenceClaim(fact.subject, fact.predicate, fact.object, claim.negated)
        for fact, claim, _ in p.facts
        if fact.predicate in PREFERENCE_PREDICATES
    ]
    topic, confidence = p.opinion if p.opinion is not None else (None, None)
    return StatedOpinion(
        p.id, p.content, p.bank, marks_change(p.content), claims, topic, confidence
    )


def _named(p: _Prepared) -> set[str]:
    """The people the observation's claims are about ("Greta", not "user")."""
    return {c.fact.subject for c in p.claims if c.fact.subject[:1].isupper()}


def _states_attribute(p: _Prepared) -> bool:
    """Whether the observation states a lasting attribute of someone: an undated
    claim the rule extractor reads from it, a named relation read as the name
    ("My neighbour Alex works at Copperleaf" is a claim about Alex), or a
    statement of how the speaker or a person it names is (``states_lasting``)."""
    claims = p.claims
    plain = without_relations(p.content)
    if plain != p.content:
        claims = _RULES.claims(plain, speaker=p.source, reference_time=p.timestamp)
    if any(c.fact.valid_from is None and not c.negated for c in claims):
        return True
    # Said in a shape the rules do not read ("A matcha latte is my go-to drink",
    # "Sofia can't be near bee stings"): how someone is, not what happened.
    return states_lasting(p.content)
