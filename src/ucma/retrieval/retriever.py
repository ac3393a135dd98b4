"""Hybrid retrieval over the one index: channels, fusion, context, graph, ranking.

``Retriever.search`` runs one memory layer (seed 004) for one query plan, on
the storage thread, with the query vector already computed:

1. channels, each capped and scored on its own scale: ``dense`` (cosine),
   ``keyword`` (BM25 over content and the lower-weight context field),
   ``entity`` (people the query names who said or took part in an episode;
   facts whose subject or object the query names), ``temporal`` (episodes in
   the plan's time range, ranked by cosine), ``tags`` (procedures and
   learnings sharing the plan's tags);
2. fusion: normalised-score fusion or reciprocal rank fusion (``fusion.py``)
   with per-channel weights from ``RetrievalConfig``;
3. context: the neighbouring episodes of a strong hit in its session (within
   ``context_window`` places) inherit ``context_share`` of its score, so an
   answer spread over adjacent turns is found together;
4. graph expansion: memories linked to the top candidates by memory-graph
   edges inherit ``score * edge weight * discount``, scaled by their PageRank
   centrality, combined with their own score as a noisy OR (seed 001's
   associative retrieval);
5. ranking (``ranking.py``): one preset of the seeds' formulas over the pool
   of the best ``limit * rank_pool_factor`` candidates.

Retrieval also counts as a review of what it returned (``record_access``).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ucma.config import UCMAConfig
from ucma.conflicts.statements import (
    is_event,
    marks_change,
    only_questions,
    only_requests,
    other_values,
    short_statement,
    states_lasting,
    states_one_value,
)
from ucma.identifiers import identifiers
from ucma.memory.graph_maths import best_first_related
from ucma.memory.retention import retention, reviewed
from ucma.people import (
    about_someone_else,
    asks_about_speaker,
    asks_what_listener_said,
    known_people,
    speaks_to_listener,
    subjects_in,
)
from ucma.providers.rule_facts import is_role
from ucma.retrieval.answer_kinds import AnswerKind, asked_kind, offers
from ucma.retrieval.confidence import confidence, event_time
from ucma.retrieval.fusion import rrf, score_fusion, weighed_by_meaning
from ucma.retrieval.name_free import blend
from ucma.retrieval.names import mention_pattern, name_pattern
from ucma.retrieval.ranking import RankInputs, rank_score, reads_retention, review_weight
from ucma.retrieval.reads import RecallReads
from ucma.retrieval.router import Layer, QueryPlan
from ucma.retrieval.terms import keyword_terms
from ucma.sentences import sentences
from ucma.storage.base import Bm25, EpisodeBrief, Storage
from ucma.types import (
    FACT_ID_PREFIX,
    Episode,
    Fact,
    Hit,
    MemoryKind,
    MemoryRecord,
    Provenance,
    Scope,
)

__all__ = ["LAYER_KINDS", "Retriever", "record_access"]

logger = logging.getLogger(__name__)

_DAY = 86_400.0
_MIN_POOL = 30
_SESSION_TOP = 3
_INHERITED = ("context", "graph_expansion")  # candidates only a neighbour brought in
# The kinds of answer whose form in a text is specific enough to count as evidence that
# a memory about whom the query asks answers it (a date for "When should I wish Omar
# many happy returns?"); any number would "answer" a quantity.
_DATED = (AnswerKind.TIME, AnswerKind.WEEKDAY)
_DERIVED_EDGE = "derived_from"
_CONTEXT_EDGE = "followed_by"  # session order is the context step's job, not the graph's
_SHORT_LINE_WORDS = 16  # a line of more words may tell both what happened and how things are
# A reply this long restates the turn it answers at length (BEAM's replies: a median
# of some 2,900 characters; everyday acknowledgements: under 100).
_LONG_REPLY_CHARS = 280
_DIGIT = re.compile(r"[0-9]")

#: The kinds each layer searches (None: every kind, the one index). Every layer
#: that can hold the answer to its class of question includes episodes: an agent
#: that only observes has nothing else, and "When should I schedule a meeting
#: with Dana?" (planning) is answered by what Dana said she prefers.
LAYER_KINDS: dict[Layer, tuple[MemoryKind, ...] | None] = {
    Layer.SEMANTIC: None,
    Layer.EPISODIC: (MemoryKind.EPISODIC,),
    Layer.GRAPH: None,
    Layer.PROCEDURAL: (MemoryKind.PROCEDURAL, MemoryKind.LEARNING, MemoryKind.EPISODIC),
    Layer.PROSPECTIVE: (MemoryKind.EPISODIC, MemoryKind.SEMANTIC, MemoryKind.LEARNING),
    Layer.META: (MemoryKind.LEARNING, MemoryKind.SEMANTIC, MemoryKind.EPISODIC),
    Layer.PLANNING: None,
}


_Channels = dict[str, dict[str, float]]
"""Each channel's scores by memory id."""


@dataclass(slots=True)
class _Candidate:
    channels: dict[str, float] = field(default_factory=dict)
    source: str = ""
    graph_distance: int = 0


class Retriever:
    """Runs one layer of a ``QueryPlan`` against a ``Storage``; storage thread only."""

    def __init__(
        self,
        storage: Storage,
        config: UCMAConfig,
        *,
        name_free: Mapping[str, float] | None = None,
        conditions: Mapping[str, float] | None = None,
    ) -> None:
        self._storage = storage
        self._config = config
        self._name_free = dict(name_free or {})
        self._conditions = dict(conditions or {})
        self._reads: dict[Scope, RecallReads] = {}
        self._readings: dict[tuple[Callable[[str], bool], str], bool] = {}
        self._found: dict[Hashable, tuple[QueryPlan, np.ndarray | None, _Channels]] = {}

    def _reads_as(self, reading: Callable[[str], bool], text: str) -> bool:
        """``reading(text)``, once per text for this retriever: the primary layer
        and the cascade's deeper looks rank many of the same memories, and the
        readings (pure functions of the text: a passing line, a marked change ...)
        are regular expressions over their whole content."""
        key = (reading, text)
        found = self._readings.get(key)
        if found is None:
            found = self._readings[key] = reading(text)
        return found

    def _own_lasting_line(self, record: MemoryRecord) -> bool:
        """Whether ``record`` is a short line someone said that tells how they are
        ("I've been based in Auckland since uni."), in their own words: not a
        fact read from it nor a long message."""
        return isinstance(record, Episode) and self._reads_as(
            _says_something_lasting, record.content
        )

    def _asks_only(self, record: MemoryRecord) -> bool:
        """Whether ``record`` only asks for something: requests and plans
        (``only_requests``), and questions a role asks (a user of an assistant:
        ``GENERIC_SPEAKERS``): in a chat with an assistant a question asks for
        help ("What's a good way to call the plumber quickly?"), where between
        people ("What got you into running?") it carries what they talk about."""
        if self._reads_as(only_requests, record.content):
            return True
        speaker = _speaker(record)
        return (
            speaker is not None
            and is_role(speaker)
            and self._reads_as(only_questions, record.content)
        )

    def _read(self, scope: Scope) -> RecallReads:
        """This retriever's reads of ``scope``, each row read once (``reads.py``)."""
        reads = self._reads.get(scope)
        if reads is None:
            reads = self._reads[scope] = RecallReads(self._storage, scope)
        return reads

    def search(
        self,
        scope: Scope,
        plan: QueryPlan,
        vector: np.ndarray | None,
        *,
        layer: Layer,
        limit: int,
        include_graph_neighbors: bool = True,
        min_importance: float = 0.0,
        scan_vectors: bool = True,
        deep: bool = False,
        include_superseded: bool = False,
    ) -> list[Hit]:
        """The layer's best ``limit`` hits. ``scan_vectors=False`` scores by cosine
        only the other channels' candidates (a full scan only if they found
        none): for probes whose words name what they look for. ``deep`` is the
        cascade's second look: archived memories too and graph neighbours two
        hops away; it ranks a pool of ``limit`` (the cascade asks for three times
        its k already), not ``rank_pool_factor`` times that: on LoCoMo dev the
        same results and confidences, a third of the records read and ranked.
        Each channel gives it as many candidates as the first look: three times
        as many changed no result on LoCoMo, BEAM or everyday (with and without
        sleep) and cost a deep look 30 % more. Superseded and expired
        memories are left out unless ``include_superseded``."""
        cfg = self._config.retrieval
        kinds = _kinds(plan, layer)
        if kinds == ():
            return []
        # Found once per plan and vector for this retriever: the cascade's deeper
        # looks into two layers searching the same kinds (an episodic question's
        # semantic and graph layers) find the same candidates. A copy: the steps
        # below change it.
        key = (scope, kinds, scan_vectors, deep)
        kept = self._found.get(key)
        if kept is None or kept[0] is not plan or kept[1] is not vector:
            found = self._channels(scope, plan, vector, kinds, scan_vectors, deep)
            kept = self._found[key] = (plan, vector, found)
        channels = {name: dict(scores) for name, scores in kept[2].items()}
        # One look at the episodes among the candidates serves the entity
        # channel and the session prior.
        briefs: dict[str, EpisodeBrief] = {}
        wants_entities = "entity" in cfg.channels and bool(plan.entities)
        if kinds_include(kinds, MemoryKind.EPISODIC) and (wants_entities or cfg.session_prior > 0):
            ids = list({i for scores in channels.values() for i in scores})
            briefs = self._read(scope).briefs(ids)
        if wants_entities:
            named = {e.lower() for e in plan.entities}
            involved = {i: 1.0 for i, brief in briefs.items() if brief.participants & named}
            merged = {**channels.get("entity", {}), **involved}
            if merged:
                channels["entity"] = merged
        candidates: dict[str, _Candidate] = {}
        for channel, scores in channels.items():
            for memory_id, score in scores.items():
                cand = candidates.get(memory_id)
                if cand is None:
                    cand = candidates[memory_id] = _Candidate(source=channel)
                cand.channels[channel] = score
        weights = dict(cfg.channel_weights)
        # Who the query names narrows; it does not decide: the entity channel
        # multiplies what the content channels found instead of adding to it.
        named = channels.pop("entity", {}) if cfg.entity_boost > 0 else {}
        boost = cfg.entity_boost * (2 if layer is Layer.GRAPH else 1)
        if cfg.keyword_cosine_ramp is not None and "keyword" in channels and "dense" in channels:
            # Only for fusion: the candidates keep their keyword match for confidence.
            # A query embedded without its names runs lower cosines (as in confidence).
            shift = self._config.cascade.unnamed_cosine_shift if plan.semantic_text else 0.0
            low, high = cfg.keyword_cosine_ramp
            channels["keyword"] = weighed_by_meaning(
                channels["keyword"], channels["dense"], low - shift, high - shift
            )
        if cfg.fusion == "rrf":
            fused = rrf(channels, weights, k=cfg.rrf_k)
        else:
            fused = score_fusion(
                channels,
                weights,
                method=cfg.score_normalisation,
                methods=cfg.channel_normalisation,
                floors=cfg.channel_floors,
            )
        if named:
            fused = {i: s * (1.0 + boost * named.get(i, 0.0)) for i, s in fused.items()}
            channels["entity"] = named
        fused = {i: s for i, s in fused.items() if s > 0}
        if not fused:
            return []
        top = max(fused.values())
        relevance = {i: s / top for i, s in fused.items()}
        if cfg.session_prior > 0 and kinds_include(kinds, MemoryKind.EPISODIC):
            self._session_prior(relevance, candidates, briefs)
        if cfg.context_window > 0 and kinds_include(kinds, MemoryKind.EPISODIC):
            self._context(scope, relevance, candidates)
        if plan.banks is not None:
            # A bank filter applies before the pool is cut, so the pool holds the
            # best of the banks asked for rather than what is left of the best overall.
            banked = self._read(scope).records(relevance)
            relevance = {
                i: r for i, r in relevance.items() if i in banked and banked[i].bank in plan.banks
            }
        pool = max(limit * (1 if deep else cfg.rank_pool_factor), _MIN_POOL)
        relevance = {i: relevance[i] for i in _best(relevance, pool)}
        if include_graph_neighbors and cfg.graph_expansion:
            hops = 2 if layer is Layer.GRAPH or deep else 1
            self._expand(scope, relevance, candidates, hops=hops)
        records = self._read(scope).records(relevance)
        relevance = {
            i: r
            for i, r in relevance.items()
            if i in records
            and (deep or records[i].archived_at is None)
            and (kinds is None or records[i].kind in kinds)
            and (plan.banks is None or records[i].bank in plan.banks)
            # Seed 003's floor: a memory below it is noise until outcomes lift it.
            and records[i].effective_salience >= cfg.min_salience
        }
        if not include_superseded:
            # Only what holds at the reference time (seed 002): no fact superseded
            # or past its valid time, no memory that newer ones replaced
            # (``include_superseded`` and ``as_of`` read the history).
            replaced = self._read(scope).superseded(relevance, at=plan.reference_time)
            relevance = {i: r for i, r in relevance.items() if i not in replaced}
        self._exact_identifiers(plan, relevance, records, candidates)
        if plan.time_range is not None and plan.time_filter:
            start, end = plan.time_range
            relevance = {
                i: r for i, r in relevance.items() if start <= event_time(records[i]) <= end
            }
        hits = self._rank(
            scope, plan, vector, layer, relevance, records, candidates, min_importance
        )
        logger.debug(
            "layer %s: %d hits of %d candidates for %r",
            layer.value,
            min(limit, len(hits)),
            len(candidates),
            plan.text[:60],
        )
        return hits[:limit]

    # -- channels -------------------------------------------------------------------

    def _channels(
        self,
        scope: Scope,
        plan: QueryPlan,
        vector: np.ndarray | None,
        kinds: tuple[MemoryKind, ...] | None,
        scan_vectors: bool,
        deep: bool = False,
    ) -> dict[str, dict[str, float]]:
        cfg = self._config.retrieval
        store = self._storage
        reads = self._read(scope)
        enabled = set(cfg.channels)
        others: dict[str, dict[str, float]] = {}
        if "keyword" in enabled and plan.terms:
            others["keyword"] = dict(
                reads.keyword_search(
                    plan.terms,
                    cfg.keyword_candidates,
                    kinds=kinds,
                    include_archived=deep,
                    bm25=Bm25(cfg.keyword_k1, cfg.keyword_b, cfg.keyword_context_weight),
                )
            )
        if "tags" in enabled and plan.tags:
            tagged: dict[str, float] = {}
            if kinds_include(kinds, MemoryKind.PROCEDURAL):
                for p in store.procedures.find_by_tags(scope, plan.tags):
                    tagged[p.id] = 0.5 + 0.5 * p.ranking_score
            if kinds_include(kinds, MemoryKind.LEARNING):
                for lesson in store.learnings.relevant(
                    scope, plan.tags, limit=cfg.keyword_candidates
                ):
                    tagged[lesson.id] = 0.5 + 0.5 * lesson.confidence
            if tagged:
                others["tags"] = tagged
        if "entity" in enabled and plan.entities and kinds_include(kinds, MemoryKind.SEMANTIC):
            about: dict[str, float] = {}
            for entity in plan.entities:
                for fact in reads.facts_about(entity):
                    about[fact.id] = max(about.get(fact.id, 0.0), fact.confidence)
            others["entity"] = about
        found: dict[str, dict[str, float]] = {}
        if "dense" in enabled and vector is not None:
            # Without a scan, only the other channels' finds are scored (a full
            # scan all the same when they found nothing).
            scan = scan_vectors or not any(others.values())
            found["dense"] = (
                {
                    i: self._dense(i, score)
                    for i, score in store.memories.vector_search(
                        scope,
                        vector,
                        cfg.vector_candidates,
                        kinds=kinds,
                        include_archived=deep,
                    )
                    if score >= cfg.semantic_min_similarity
                }
                if scan
                else {}
            )
            if cfg.dense_for_all_candidates or not scan:
                # Every candidate's cosine is known exactly: a keyword hit outside the
                # dense top k is scored by its real similarity, not by absence.
                # The memories naming whom the query names are candidates too, and
                # the standing instructions whose condition matches the query.
                pool = [i for scores in others.values() for i in scores]
                pool += [*self._name_free, *self._conditions]
                self._fill_cosines(scope, vector, found["dense"], pool)
        found.update(others)
        if (
            "temporal" in enabled
            and plan.time_range is not None
            and kinds_include(kinds, MemoryKind.EPISODIC)
        ):
            found["temporal"] = self._in_range(scope, plan, vector, found)
        return {name: scores for name, scores in found.items() if scores}

    def _in_range(
        self,
        scope: Scope,
        plan: QueryPlan,
        vector: np.ndarray | None,
        found: dict[str, dict[str, float]],
    ) -> dict[str, float]:
        """Episodes of the time range, best cosine first (all 1.0 without a vector).

        A range of up to ``5 x vector_candidates`` episodes is taken whole; of a
        broader one ("before the trip" a year in), the episodes the other
        channels found."""
        assert plan.time_range is not None
        cap = self._config.retrieval.vector_candidates
        start, end = plan.time_range
        ids = self._storage.episodes.in_range(scope, start, end, limit=cap * 5 + 1)
        if len(ids) > cap * 5:
            pool = list({i for scores in found.values() for i in scores})
            briefs = self._read(scope).briefs(pool)
            ids = [i for i, brief in briefs.items() if start <= brief.timestamp <= end]
        if vector is None or not ids:
            return dict.fromkeys(ids, 1.0)
        known = found.get("dense", {})
        scored = {i: known[i] for i in ids if i in known}
        self._fill_cosines(scope, vector, scored, ids)
        return {i: max(scored[i], 0.0) + 1e-6 for i in _best(scored, cap)}

    # -- session prior, context and graph --------------------------------------------------

    def _session_prior(
        self,
        relevance: dict[str, float],
        candidates: dict[str, _Candidate],
        briefs: dict[str, EpisodeBrief],
    ) -> None:
        """Episodes whose session matches the query as a whole rise: a session's
        match is the sum of its best few candidates' scores, normalised to the
        best session, and each episode gains ``session_prior`` times it."""
        cfg = self._config.retrieval
        sessions = {i: b.session_id for i, b in briefs.items() if i in relevance}
        by_session: dict[str, list[float]] = {}
        for memory_id, session in sessions.items():
            scores = by_session.get(session)
            if scores is None:
                scores = by_session[session] = []
            scores.append(relevance[memory_id])
        totals = {s: sum(sorted(v, reverse=True)[:_SESSION_TOP]) for s, v in by_session.items()}
        best = max(totals.values(), default=0.0)
        if best <= 0:
            return
        lifts = {s: cfg.session_prior * total / best for s, total in totals.items()}
        scale = 1.0 + cfg.session_prior
        for memory_id, session in sessions.items():
            lift = lifts[session]
            relevance[memory_id] = (relevance[memory_id] + lift) / scale
            candidates[memory_id].channels["session"] = lift

    def _context(
        self, scope: Scope, relevance: dict[str, float], candidates: dict[str, _Candidate]
    ) -> None:
        cfg = self._config.retrieval
        top = _best(relevance, cfg.context_top)
        neighbours = self._read(scope).neighbors(top, cfg.context_window)
        inherited: dict[str, float] = {}
        for parent, around in neighbours.items():
            for neighbour, offset in around:
                share = relevance[parent] * cfg.context_share ** abs(offset)
                inherited[neighbour] = max(inherited.get(neighbour, 0.0), share)
        for memory_id, share in inherited.items():
            if share > relevance.get(memory_id, 0.0):
                relevance[memory_id] = share
                cand = candidates.setdefault(memory_id, _Candidate(source="context"))
                cand.channels["context"] = share

    def _expand(
        self,
        scope: Scope,
        relevance: dict[str, float],
        candidates: dict[str, _Candidate],
        *,
        hops: int,
    ) -> None:
        cfg = self._config.retrieval
        graph = self._storage.graph
        reads = self._read(scope)

        def neighbors(node_id: str) -> list[tuple[str, str, float]]:
            return [
                edge
                for edge in reads.edges(node_id)
                if edge[1] != _CONTEXT_EDGE and not _restatement(node_id, edge[0], edge[1])
            ]

        seeds = _best(relevance, cfg.graph_expansion_top_k)
        inherited: dict[str, tuple[float, int]] = {}
        for seed in seeds:
            for node_id, weight, distance in best_first_related(
                seed, neighbors, hops, min_weight=cfg.graph_expansion_min_weight
            ):
                score = relevance[seed] * weight * cfg.graph_expansion_discount
                if node_id != seed and score > inherited.get(node_id, (0.0, 0))[0]:
                    inherited[node_id] = (score, distance)
        if not inherited:
            return
        ranks = graph.pagerank(scope, list(inherited))
        # The scope's size matters only once PageRank has been computed (by sleep).
        nodes = graph.stats(scope).get("node_count", 0) if any(ranks.values()) else 0
        centrality = _centrality(ranks, nodes)
        for node_id, (score, distance) in inherited.items():
            score *= centrality.get(node_id, 1.0)
            own = relevance.get(node_id, 0.0)
            # Two independent signs of relevance combine like a noisy OR.
            relevance[node_id] = own + score * (1.0 - own)
            cand = candidates.setdefault(
                node_id, _Candidate(source="graph_expansion", graph_distance=distance)
            )
            cand.channels["graph"] = score

    def _exact_identifiers(
        self,
        plan: QueryPlan,
        relevance: dict[str, float],
        records: dict[str, MemoryRecord],
        candidates: dict[str, _Candidate],
    ) -> None:
        """A memory holding an identifier the query names (an email, code, id or
        URL, matched whole and case-insensitively) gains ``identifier_boost``:
        the exact match decides, not the words its parts share with others."""
        boost = self._config.retrieval.identifier_boost
        wanted = {found.lower() for found in identifiers(plan.text)}
        if not wanted or boost <= 0:
            return
        for memory_id in relevance:
            held = {found.lower() for found in identifiers(records[memory_id].content)}
            if wanted & held:
                relevance[memory_id] *= 1.0 + boost
                candidates[memory_id].channels["identifier"] = 1.0

    # -- ranking ----------------------------------------------------------------------

    def _rank(
        self,
        scope: Scope,
        plan: QueryPlan,
        vector: np.ndarray | None,
        layer: Layer,
        relevance: dict[str, float],
        records: dict[str, MemoryRecord],
        candidates: dict[str, _Candidate],
        min_importance: float,
    ) -> list[Hit]:
        cfg = self._config
        states = (
            self._read(scope).retention(relevance) if reads_retention(cfg.retrieval.ranking) else {}
        )
        flagged = self._read(scope).flagged(relevance)
        cosines = self._cosines(scope, vector, relevance, candidates)
        # A name the embedded query shares with a memory lifts their cosine
        # whatever else they share; a query embedded without its names scores lower.
        named_in_query = [name_pattern(n) for n in plan.names]
        unnamed = bool(plan.semantic_text)
        answered = self._answered(scope, plan, candidates)
        heard, unheard = self._unknown_names(scope, plan)
        heard_people = _people_among(heard, plan.text, [records[m].content for m in relevance])
        # Whom the query names, when the scope's memories involve them at all.
        named = bool(plan.entities) and any("entity" in c.channels for c in candidates.values())
        asked_about = {e.lower() for e in plan.entities}
        # A question about the one asking, where a line about someone else answers
        # another question ("What genre should you queue up for me?" / "My flatmate
        # Sofia listens to baroque nonstop").
        about_asker = (
            not plan.entities and not plan.names and self._reads_as(asks_about_speaker, plan.text)
        )
        # The people these memories name, so a short line naming one without a
        # relation ("Tomás always orders a chai latte") reads as about them.
        elsewhere_reading = partial(
            _about_someone_else,
            people=frozenset(known_people(records[m].content for m in relevance))
            if about_asker
            else frozenset(),
        )
        relevant = False
        # A question about how things are, not about what happened, and the kind of
        # answer it asks for when its form says (a time, a quantity).
        about_state = not self._reads_as(is_event, plan.text)
        asks_state = cfg.retrieval.event_factor < 1 and about_state
        wanted = asked_kind(plan.text) if about_state else None
        hits: list[Hit] = []
        for memory_id, rel in relevance.items():
            record = records[memory_id]
            if record.effective_salience < min_importance:
                continue
            state = states.get(memory_id)
            # A memory whose premise changed, or a superseded fact, is in doubt (seed 002).
            stale = memory_id in flagged or (isinstance(record, Fact) and not record.is_current)
            cand = candidates[memory_id]
            listener = named and _said_to_another(record, asked_about)
            elsewhere = about_asker and self._reads_as(elsewhere_reading, record.content)
            # A short line saying nothing lasting, for a question about how things are.
            passing = asks_state and self._reads_as(_says_nothing_lasting, record.content)
            missing = wanted is not None and not offers(record.content, wanted)
            off_subject = (
                (named and ("entity" not in cand.channels or listener))
                or (bool(heard) and not any(p.search(record.content) for p in heard))
                or elsewhere
            )
            # Holds a name the embedded query holds.
            shares_name = any(p.search(record.content) for p in named_in_query)
            # About whom the query asks, and holding the date or weekday it asks for.
            dated = (
                wanted in _DATED
                and not (missing or off_subject or unheard)
                and (about_asker or shares_name)
            )
            conf = confidence(
                record,
                # How much of what is asked a memory naming the person answers
                # is read without the name (name_free.py).
                cosine=self._name_free.get(memory_id, cosines.get(memory_id, 0.0)),
                keyword=answered.get(memory_id, 0.0),
                layer=layer.value,
                reference_time=plan.reference_time,
                config=cfg.cascade,
                in_doubt=stale,
                off_subject=off_subject,
                unheard=unheard,
                offers_kind=dated,
                passing=passing,
                missing_kind=missing,
                cosine_shift=(
                    -cfg.cascade.unnamed_cosine_shift
                    if unnamed
                    else self._shared_name_shift(memory_id)
                    if shares_name
                    else -cfg.cascade.speaker_cosine_shift
                    if about_asker and self._own_lasting_line(record)
                    else 0.0
                ),
            )
            # A minimum relevance (seed 001's similarity floor), so nonsense finds
            # nothing; a neighbour inherits its relevance from the hit it follows
            # (and goes with it when no hit passes on its own).
            inherited = cand.source in _INHERITED
            # Holding no answer of the kind asked for makes a memory less sure, not
            # less related: the floor reads its relevance before that factor.
            related = conf.semantic_relevance
            if missing:
                related /= cfg.cascade.missing_kind_factor
            if related < cfg.retrieval.min_relevance:
                if not inherited:
                    continue
            elif not inherited:
                relevant = True
            inputs = RankInputs(
                relevance=rel,
                salience=record.effective_salience,
                outcome_adjustment=record.outcome_adjustment,
                age_days=(plan.reference_time - event_time(record)) / _DAY,
                retention=(
                    retention(
                        state.stability, max(0.0, plan.reference_time - state.last_reviewed) / _DAY
                    )
                    if state
                    else None
                ),
                confidence=conf.overall,
            )
            channels = dict(cand.channels)
            if memory_id in cosines:
                channels.setdefault("cosine", cosines[memory_id])
            score = rank_score(cfg.retrieval.ranking, inputs, cfg.retrieval)
            if elsewhere:
                score *= cfg.retrieval.other_person_factor
            if heard_people and not any(p.search(record.content) for p in heard_people):
                score *= cfg.retrieval.unmentioned_factor
            if passing:
                score *= cfg.retrieval.event_factor
                if self._asks_only(record):
                    score *= cfg.retrieval.request_factor
            if missing:
                score *= cfg.retrieval.missing_kind_factor
            hits.append(
                Hit(
                    memory=record,
                    score=review_weight(score, stale, cfg.conflicts.review_rank_factor),
                    relevance=rel,
                    source=cand.source,
                    graph_distance=cand.graph_distance,
                    channels=channels,
                    layer=layer.value,
                    confidence=conf,
                    needs_review=stale,
                )
            )
        if not relevant:
            return []
        hits.sort(key=lambda h: (-h.score, h.memory.id))
        hits = _without_restatements(hits, self._read_from(scope, hits))
        hits = self._changes_before_old_values(scope, hits, plan.text)
        if about_state:
            hits = self._later_values_first(scope, hits, plan.text)
        return self._said_before_replies(scope, hits, plan.text)

    def _changes_before_old_values(self, scope: Scope, hits: list[Hit], query: str) -> list[Hit]:
        """A later statement marking a change ("Omar switched to Northwind Freight
        recently") placed above an earlier statement about the same people (or the
        speaker) among the best ``changes_window`` hits, when it answers the query
        about as well (its cosine, read without shared names, at least
        ``changes_min_cosine`` and at most ``changes_margin`` below the earlier
        one's): a value said to be new is the current one. The earlier statements
        it passes, and those a change replaces for this query
        (``_replaced_for_query``), then go below the best
        ``changes_demote_window`` hits. Only short statements take
        part; a long message mentioning "now" is no change of one value. A
        later statement that marks no change passes an earlier one only when both
        state one value for what ``query`` asks (``other_values``) and it answers
        about as well (``changes_uncued_margin``); those it passes keep their
        place below it. Scores stay in place, so they still descend."""
        cfg = self._config.retrieval
        if len(hits) < 2:
            return hits
        window = max(cfg.changes_window, cfg.changes_demote_window)
        names = known_people(h.content for h in hits[:window])
        order = list(hits)
        moved: set[str] = set()
        for position in range(1, min(cfg.changes_window, len(hits))):
            later = order[position]
            cued = self._states_change(later)
            if not cued and not self._states_value(later):
                continue
            subject = subjects_in(later.content, names)
            # The earlier one may answer better by at most the margin.
            margin = cfg.changes_margin if cued else cfg.changes_uncued_margin
            ceiling = self._closeness(later) + margin
            for above in range(position):
                earlier = order[above]
                if (
                    event_time(earlier.memory) < event_time(later.memory)
                    and subjects_in(earlier.content, names) == subject
                    and self._closeness(earlier) <= ceiling
                    and self._reads_as(short_statement, earlier.content)
                    and (
                        cued
                        or self._reads_as(states_one_value, earlier.content)
                        and other_values(earlier.content, later.content, query, subject)
                    )
                ):
                    order.insert(above, order.pop(position))
                    if cued:
                        moved.add(earlier.id)
                    break
        replaced = self._replaced_for_query(scope, order[: cfg.changes_demote_window], names)
        if cfg.changes_demote_window > 0:
            replaced |= moved
        if replaced:
            rest = [h for h in order if h.id not in replaced]
            below = [h for h in order if h.id in replaced]
            at = cfg.changes_demote_window
            order = rest[:at] + below + rest[at:]
        return _keep_scores(order, hits)

    def _later_values_first(self, scope: Scope, hits: list[Hit], query: str) -> list[Hit]:
        """A later message from the same speaker placed above an earlier one among
        the best ``changes_window`` hits when both give a value for what ``query``
        asks (``_gives_value``), the two say much the same (their cosine at least
        ``changes_demote_pair``) and the later scores at most
        ``changes_long_margin`` (a share) below: "I've reached 165 commits" after
        "... pushed with 150 commits". For messages too long for the statement
        rules of ``_changes_before_old_values`` (two short statements are left to
        them). Scores stay in place."""
        cfg = self._config.retrieval
        window = min(cfg.changes_window, len(hits))
        if cfg.changes_long_margin <= 0 or window < 2:
            return hits
        vectors = self._read(scope).vectors(h.id for h in hits[:window])
        order = list(hits)
        for position in range(1, window):
            later = order[position]
            if later.id not in vectors or not _gives_value(later.content, query):
                continue
            for above in range(position):
                earlier = order[above]
                if (
                    earlier.id in vectors
                    and event_time(earlier.memory) < event_time(later.memory)
                    and _speaker(earlier.memory) is not None
                    and _speaker(earlier.memory) == _speaker(later.memory)
                    and not (short_statement(earlier.content) and short_statement(later.content))
                    and later.score >= earlier.score * (1.0 - cfg.changes_long_margin)
                    and float(np.dot(vectors[earlier.id], vectors[later.id]))
                    >= cfg.changes_demote_pair
                    and _gives_value(earlier.content, query)
                ):
                    order.insert(above, order.pop(position))
                    break
        return _keep_scores(order, hits)

    def _states_change(self, hit: Hit) -> bool:
        """A short statement that marks a change and answers the query at least
        ``changes_min_cosine`` by meaning."""
        return (
            self._closeness(hit) >= self._config.retrieval.changes_min_cosine
            and self._reads_as(marks_change, hit.content)
            and self._reads_as(short_statement, hit.content)
        )

    def _states_value(self, hit: Hit) -> bool:
        """A statement of one value in one short sentence that answers the query at
        least ``changes_min_cosine`` by meaning (uncued: ``changes_uncued_margin``)."""
        return (
            self._config.retrieval.changes_uncued_margin > 0
            and self._closeness(hit) >= self._config.retrieval.changes_min_cosine
            and self._reads_as(states_one_value, hit.content)
        )

    def _replaced_for_query(
        self, scope: Scope, top: list[Hit], names: AbstractSet[str]
    ) -> set[str]:
        """The ids of the ``top`` hits that a later change among them replaces as
        far as this query goes: an earlier short statement about the same people
        that answers the query about as well (cosines without shared names within
        ``changes_demote_gap``) and says much the same thing (the two memories'
        cosine at least ``changes_demote_pair``). Supersession at observe time
        missed them because their words differ ("Rafael has a place in Auckland" /
        "As of May: Rafael lives in Lisbon"); the query says which attribute is
        asked."""
        cfg = self._config.retrieval
        changes = [h for h in top if self._states_change(h)]
        if not changes or cfg.changes_demote_window <= 0:
            return set()
        vectors = self._read(scope).vectors(h.id for h in top)
        replaced: set[str] = set()
        for later in changes:
            subject = subjects_in(later.content, names)
            for earlier in top:
                if (
                    earlier.id not in replaced
                    and earlier.id in vectors
                    and later.id in vectors
                    and event_time(earlier.memory) < event_time(later.memory)
                    and subjects_in(earlier.content, names) == subject
                    and abs(self._closeness(earlier) - self._closeness(later))
                    <= cfg.changes_demote_gap
                    and float(np.dot(vectors[earlier.id], vectors[later.id]))
                    >= cfg.changes_demote_pair
                    and self._reads_as(short_statement, earlier.content)
                ):
                    replaced.add(earlier.id)
        return replaced

    def _closeness(self, hit: Hit) -> float:
        """How well a hit answers the query by meaning: its cosine with the names
        both hold put as a pronoun when that was compared (name_free.py)."""
        return self._name_free.get(hit.id, hit.channels.get("cosine", 0.0))

    def _said_before_replies(self, scope: Scope, hits: list[Hit], query: str) -> list[Hit]:
        """Each assistant reply among ``hits`` preceded by the turn it answers, when
        that turn was found too, by its own match (not only as the reply's context):
        what the user said is the record, and a reply restating it at length
        outranked it (BEAM's evidence is mostly user turns). A reply answers the
        turn before it when the two are close (``reply_prompt_cosine``). With
        ``replies_after_others``, such replies that are long (at least
        ``_LONG_REPLY_CHARS``) then go below every other hit
        unless ``query`` speaks to the one who replied ("How did you recommend
        ..."). Scores stay in place, so they still descend."""
        if not self._config.retrieval.prompts_before_replies:
            return hits
        replies = [h.id for h in hits if _generic(h.memory, "assistant")]
        if not replies:
            return hits
        answered = {
            reply: next((turn for turn, offset in around if offset == -1), None)
            for reply, around in self._read(scope).neighbors(replies, 1).items()
        }
        vectors = self._read(scope).vectors(
            [*answered, *(p for p in answered.values() if p is not None)]
        )
        floor = self._config.retrieval.reply_prompt_cosine
        answered = {
            reply: prompt
            for reply, prompt in answered.items()
            if prompt in vectors
            and reply in vectors
            and float(np.dot(vectors[reply], vectors[prompt])) >= floor
        }
        order = list(hits)
        for position in range(len(order)):
            prompt = answered.get(order[position].id)
            found = next(
                (j for j in range(position + 1, len(order)) if order[j].id == prompt), None
            )
            if (
                found is not None
                and not _generic(order[found].memory, "assistant")
                and order[found].source not in _INHERITED
            ):
                order.insert(position, order.pop(found))
        if self._config.retrieval.replies_after_others and not asks_what_listener_said(query):
            # A long reply whose turn was found says again at length what the turn
            # said: the other hits first, unless the question asks what the
            # replier said. A short reply ("Deploys are frozen on Fridays") may
            # say what its turn did not, and keeps its place.
            shown = {h.id for h in order if h.source not in _INHERITED}
            size = {h.id: len(h.content) for h in order}  # every reply is a hit
            echoed = {
                reply
                for reply, prompt in answered.items()
                if prompt in shown and size[reply] >= _LONG_REPLY_CHARS
            }
            order.sort(key=lambda h: h.id in echoed)
        return _keep_scores(order, hits)

    def _shared_name_shift(self, memory_id: str) -> float:
        """The confidence scale's shift for a memory holding a name the query
        holds: up for its plain cosine, which the name lifts; down, as for an
        unnamed query, when the name-free cosine stands for it."""
        cfg = self._config
        if memory_id not in self._name_free:
            return cfg.cascade.shared_name_cosine_shift
        return -cfg.cascade.unnamed_cosine_shift

    def _read_from(self, scope: Scope, hits: Sequence[Hit]) -> dict[str, MemoryRecord]:
        """The live, current episodes that the inferred facts among ``hits`` were
        read from and that are not among the hits themselves."""
        shown = {hit.memory.id for hit in hits}
        wanted = {
            source
            for hit in hits
            if _inferred(hit.memory)
            for source in hit.memory.source_episode_ids  # type: ignore[attr-defined]
            if source not in shown
        }
        if not wanted:
            return {}
        found = self._read(scope).records(sorted(wanted))
        replaced = self._read(scope).superseded(found)
        return {
            i: record
            for i, record in found.items()
            if record.archived_at is None and i not in replaced
        }

    def _answered(
        self, scope: Scope, plan: QueryPlan, candidates: dict[str, _Candidate]
    ) -> dict[str, float]:
        """Each candidate's share of the query's keyword information, counting
        only the words that say what is asked (``QueryPlan.answer_terms``): a
        memory that shares only a name ("my landlord Bruno") answers nothing."""
        if plan.answer_terms == plan.terms:
            return {
                i: c.channels["keyword"] for i, c in candidates.items() if "keyword" in c.channels
            }
        if not plan.answer_terms:
            return {}
        cfg = self._config.retrieval
        return dict(
            self._read(scope).keyword_search(
                plan.answer_terms,
                cfg.keyword_candidates,
                bm25=Bm25(cfg.keyword_k1, cfg.keyword_b, cfg.keyword_context_weight),
            )
        )

    def _unknown_names(self, scope: Scope, plan: QueryPlan) -> tuple[list[re.Pattern[str]], bool]:
        """The names the query mentions that are no participant the scope knows,
        split by the keyword index (archived memories included): those some memory
        mentions, as whole-word patterns (possessive or plural allowed), so that a
        memory not mentioning any of them counts as off the query's subject; and
        whether one is mentioned by no memory at all (then none answers the query,
        whatever else they share)."""
        reads = self._read(scope)
        heard: list[re.Pattern[str]] = []
        unheard = False
        for name in plan.unknown_names:
            words = keyword_terms(name)
            if not words:
                continue
            if any(reads.keyword_search([w], 1, include_archived=True) for w in words):
                heard.append(mention_pattern(name))
            else:
                unheard = True
        return heard, unheard

    def _cosines(
        self,
        scope: Scope,
        vector: np.ndarray | None,
        relevance: dict[str, float],
        candidates: dict[str, _Candidate],
    ) -> dict[str, float]:
        if vector is None:
            return {}
        cosines = {
            i: candidates[i].channels["dense"]
            for i in relevance
            if "dense" in candidates[i].channels
        }
        self._fill_cosines(scope, vector, cosines, relevance)
        return cosines

    def _fill_cosines(
        self, scope: Scope, vector: np.ndarray, scores: dict[str, float], ids: Iterable[str]
    ) -> None:
        """Add to ``scores`` the cosine with ``vector`` of each of ``ids`` it lacks."""
        missing = [i for i in ids if i not in scores]
        if missing:
            for memory_id, stored in self._read(scope).vectors(missing).items():
                scores[memory_id] = self._dense(memory_id, float(np.dot(stored, vector)))

    def _dense(self, memory_id: str, cosine: float) -> float:
        """A memory's dense score: its cosine, mixed with its name-free cosine when
        it names whom the query names (name_free.py), and at least its condition's
        cosine when it is a standing instruction (directives.py)."""
        name_free = self._name_free.get(memory_id)
        if name_free is not None:
            cosine = blend(cosine, name_free, self._config.retrieval.name_free_weight)
        condition = self._conditions.get(memory_id)
        return cosine if condition is None else max(cosine, condition)


def record_access(
    storage: Storage, scope: Scope, memory_ids: Sequence[str], now: float, boost_base: float
) -> None:
    """Count a retrieval as a review: access statistics plus Ebbinghaus
    reinforcement with the spacing effect (seed 001), in one transaction."""
    if not memory_ids:
        return
    with storage.transaction():
        storage.memories.touch(scope, memory_ids, now)
        states = storage.retention.get_many(scope, memory_ids)
        storage.retention.put_many(scope, [reviewed(s, now, boost_base) for s in states.values()])


def _gives_value(text: str, query: str) -> bool:
    """Whether the sentence of ``text`` sharing most of ``query``'s keyword terms
    shares at least two and holds a number (a count, a date, a version): it gives
    a value for what is asked, not only the topic."""
    wanted = set(keyword_terms(query))
    shared = [(len(wanted & set(keyword_terms(s))), s) for s in sentences(text)]
    count, sentence = max(shared, key=lambda pair: pair[0], default=(0, ""))
    return count >= 2 and _DIGIT.search(sentence) is not None


def _speaker(memory: MemoryRecord) -> str | None:
    """Who said an episode (None for other kinds)."""
    return memory.source if isinstance(memory, Episode) else None


def _says_something_lasting(text: str) -> bool:
    """A short line (at most ``_SHORT_LINE_WORDS`` words) that says how someone is
    ("I've been based in Auckland since uni.")."""
    return len(text.split()) <= _SHORT_LINE_WORDS and states_lasting(text)


def _about_someone_else(text: str, people: frozenset[str]) -> bool:
    """``people.about_someone_else``, with ``people`` (names other memories use for
    people) for a short line (at most ``_SHORT_LINE_WORDS`` words) only: a long
    message that names someone tells the asker about them, as a reply does."""
    return about_someone_else(text, people if len(text.split()) <= _SHORT_LINE_WORDS else ())


def _says_nothing_lasting(text: str) -> bool:
    """A short line (at most ``_SHORT_LINE_WORDS`` words) that says nothing of how
    someone is: an event ("Had lunch with Rafael near the river"), a plan, a
    request or a question. A longer message may hold both."""
    return len(text.split()) <= _SHORT_LINE_WORDS and not states_lasting(text)


def _people_among(
    heard: Sequence[re.Pattern[str]], query: str, contents: Sequence[str]
) -> list[re.Pattern[str]]:
    """The ``heard`` name patterns that name a person: in the query or in a text
    mentioning them, as someone's relation, a full name or a subject
    (``known_people``), not a product or a place ("Felix" in "my teammate
    Felix", not "Flask")."""
    if not heard:
        return []
    mentioning = [text for text in contents if any(p.search(text) for p in heard)]
    people = known_people([query, *mentioning])
    return [p for p in heard if any(p.search(person) for person in people)]


def _best(scores: Mapping[str, float], count: int) -> list[str]:
    """The ids of the ``count`` best ``scores``, best first, equal scores by id: the
    order of ``sorted(key=lambda i: (-scores[i], i))`` from two sorts without a
    Python call per id (a reversed sort keeps equal items in place)."""
    ids = sorted(scores)
    ids.sort(key=scores.__getitem__, reverse=True)
    return ids[:count]


def _keep_scores(order: list[Hit], hits: list[Hit]) -> list[Hit]:
    """``hits`` reordered as ``order``, each place keeping its score, so that
    scores still descend."""
    if order == hits:
        return hits
    return [
        hit if hit is original else dataclasses.replace(hit, score=original.score)
        for hit, original in zip(order, hits, strict=True)
    ]


def _without_restatements(
    hits: list[Hit], read_from: Mapping[str, MemoryRecord] | None = None
) -> list[Hit]:
    """Each piece of information once, as it was said: a fact inferred from
    episodes restates them, so of an inferred fact and its source episodes only
    the episode is returned, at the better of their places (what was said,
    whole and verbatim, rather than a rule's reading of it). ``read_from`` holds
    source episodes that were not found themselves; a fact whose source is
    neither found nor there (archived, superseded, deleted) stays. The graph
    still links them (``related``, ``sources``)."""
    present = {hit.memory.id: hit for hit in hits}
    seen: set[str] = set()
    hits = [
        hit
        for hit in (_episode_for(h, present, read_from or {}) for h in hits)
        if not (hit.memory.id in seen or seen.add(hit.memory.id))
    ]
    derived: dict[str, set[str]] = {}
    for hit in hits:
        memory = hit.memory
        if _inferred(memory):
            for source in memory.source_episode_ids:  # type: ignore[attr-defined]
                derived.setdefault(source, set()).add(memory.id)
    if not derived:
        return hits
    kept: list[Hit] = []
    shown: set[str] = set()
    for hit in hits:
        memory = hit.memory
        if _inferred(memory):
            partners = set(memory.source_episode_ids)  # type: ignore[attr-defined]
        else:
            partners = derived.get(memory.id, set())
        if partners & shown:
            continue
        kept.append(hit)
        shown.add(memory.id)
    return kept


def _episode_for(
    hit: Hit, present: Mapping[str, Hit], read_from: Mapping[str, MemoryRecord]
) -> Hit:
    """An inferred fact's hit stood in for by its source episode at the fact's
    score: the found one (if it scores lower), else one read for it."""
    memory = hit.memory
    if not _inferred(memory):
        return hit
    sources = memory.source_episode_ids  # type: ignore[attr-defined]
    found = next((present[i] for i in sources if i in present), None)
    if found is not None:
        return dataclasses.replace(found, score=hit.score) if found.score < hit.score else hit
    episode = next((read_from[i] for i in sources if i in read_from), None)
    return hit if episode is None else dataclasses.replace(hit, memory=episode)


def _generic(memory: MemoryRecord, source: str) -> bool:
    """Whether ``memory`` is an episode from the generic speaker ``source``."""
    return isinstance(memory, Episode) and memory.said_by(source)


def _inferred(memory: MemoryRecord) -> bool:
    """A fact read from episodes by rules or a model (not stated by anyone)."""
    return (
        isinstance(memory, Fact)
        and memory.provenance is Provenance.INFERRED
        and bool(memory.source_episode_ids)
    )


def _restatement(node_id: str, other_id: str, edge_type: str) -> bool:
    """A fact and the episode it was read from say the same thing: the link
    between them is provenance, not association, so neither inherits score from
    the other (it lifted every statement the rules could read above the ones
    they could not). A lesson's link to its evidence still counts."""
    return edge_type == _DERIVED_EDGE and (
        node_id.startswith(FACT_ID_PREFIX) or other_id.startswith(FACT_ID_PREFIX)
    )


def kinds_include(kinds: Iterable[MemoryKind] | None, kind: MemoryKind) -> bool:
    return kinds is None or kind in kinds


def _said_to_another(record: MemoryRecord, speakers: set[str]) -> bool:
    """An episode one of ``speakers`` said about whom they spoke to ("Congrats on
    the deals, you're killing it!"): it tells of its listener, not its speaker."""
    return (
        isinstance(record, Episode)
        and record.source.lower() in speakers
        and speaks_to_listener(record.content)
    )


def _kinds(plan: QueryPlan, layer: Layer) -> tuple[MemoryKind, ...] | None:
    """The layer's kinds, narrowed by the caller's explicit kinds."""
    layer_kinds = LAYER_KINDS[layer]
    if plan.kinds is None:
        return layer_kinds
    if layer_kinds is None:
        return plan.kinds
    return tuple(k for k in layer_kinds if k in plan.kinds)


def _centrality(pagerank: dict[str, float], node_count: int) -> dict[str, float]:
    """PageRank relative to the average node, capped at 1; nodes never ranked count 1."""
    return {
        node: min(1.0, 0.5 + 0.5 * score * node_count) if score > 0 else 1.0
        for node, score in pagerank.items()
    }
