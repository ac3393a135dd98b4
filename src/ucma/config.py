"""UCMAConfig: every tunable of UCMA, grouped by component.

Defaults are the seeds' values: seed 001 chapter 7 for the core components,
seed 002 for conflict resolution, seed 003 for salience, decay and fusion,
seed 004 for cascading recall. Nothing here reads the environment; the CLI and
the server build a config explicitly.

Each group is a frozen dataclass validated on construction, so an invalid
value fails early with a ConfigError naming the field.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ucma.errors import ConfigError
from ucma.lru import SCOPES_IN_MEMORY
from ucma.privacy.kinds import ContentKind

if TYPE_CHECKING:
    from ucma.storage.base import AnnSettings

__all__ = [
    "CascadeConfig",
    "ConflictConfig",
    "ConsolidationConfig",
    "EmbeddingConfig",
    "EpisodicConfig",
    "ForgettingConfig",
    "GraphConfig",
    "LimitsConfig",
    "OpinionConfig",
    "PatternConfig",
    "PredictiveConfig",
    "PrivacyConfig",
    "ProcedureConfig",
    "RetrievalConfig",
    "SalienceConfig",
    "SensoryConfig",
    "SynthesisConfig",
    "ServiceConfig",
    "UCMAConfig",
    "WorkingMemoryConfig",
]


def _check(instance: object) -> None:
    """Reject negative or non-finite numbers, the common misconfiguration."""
    for f in dataclasses.fields(instance):  # type: ignore[arg-type]
        value = getattr(instance, f.name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value) or value < 0:
            raise ConfigError(
                f"{type(instance).__name__}.{f.name} must be a finite number >= 0, got {value!r}"
            )


@dataclass(frozen=True, kw_only=True)
class SensoryConfig:
    capacity: int = 512

    def __post_init__(self) -> None:
        _check(self)
        if self.capacity < 1:
            raise ConfigError("SensoryConfig.capacity must be at least 1")


@dataclass(frozen=True, kw_only=True)
class WorkingMemoryConfig:
    system_tokens: int = 2048
    active_tokens: int = 6144
    staging_tokens: int = 512
    # remember() stages this many top hits in the staging zone (seed 001: 3).
    staged_hits: int = 3

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True, kw_only=True)
class EpisodicConfig:
    short_term_ttl_hours: float = 48.0
    bucket_seconds: int = 3600
    # observe() stores an episode only above this heuristic importance (seed 001: 0.2).
    min_importance_to_store: float = 0.2
    # Seed 003 R4: a new episode more similar than this (cosine) to a live episode of the
    # scope reinforces that episode instead of being stored. Above 1.0 disables the check.
    duplicate_similarity: float = 0.95
    # How many of the scope's latest episodes a new one is compared with (R4).
    duplicate_window: int = 5_000

    def __post_init__(self) -> None:
        _check(self)
        if self.bucket_seconds < 1:
            raise ConfigError("EpisodicConfig.bucket_seconds must be at least 1")


@dataclass(frozen=True, kw_only=True)
class ConsolidationConfig:
    interval_seconds: float = 3600.0
    summary_max_tokens: int = 150
    fact_extraction_batch: int = 10
    compression_importance_base: float = 0.30
    compression_volume_penalty_max: float = 0.40
    # Episodes whose facts are extracted per sleep cycle (the rest wait for the next one).
    abstraction_batch: int = 2000
    # Hebb's rule: each joint retrieval adds this much weight to a co_retrieved edge ...
    hebbian_rate: float = 0.1
    # ... up to this cap.
    hebbian_max_weight: float = 0.9
    # remember() counts the top this-many hits of a query as retrieved together.
    co_retrieval_top_k: int = 5
    # What new_session does: "background" (return at once and consolidate the scope
    # in an asyncio task, one per scope, see AsyncMemory.consolidation_task), "sync"
    # (consolidate before returning: deterministic, for scripts and tests) or "off".
    on_new_session: str = "background"
    # close() lets a running background cycle finish its phase for at most this
    # many seconds, then cancels it (a provider that never answers must not hang
    # shutdown; each phase commits whole, so a cancelled one leaves no half-write).
    close_timeout_seconds: float = 30.0
    # Provider for summaries and fact extraction: "heuristic" (offline) or
    # "<provider>:<model>" such as "ollama:llama3.1" (needs ucma[openai]).
    llm: str = "heuristic"
    llm_base_url: str | None = None
    llm_timeout_seconds: float = 60.0
    llm_attempts: int = 2
    # Also ask the LLM to score importance of expired episodes during compression.
    llm_classify_importance: bool = False
    # Gardener: a job's lock expires after this long (a crashed process cannot block it).
    gardener_lease_seconds: float = 3600.0
    # The database's leases (ucma.lifecycle.leases): the process that runs a scope's
    # sleep cycle, or forwards the event log, holds that work's lease for this long and
    # renews it every third of it, so no two processes on one database do it at once,
    # and a crashed one's work is taken over this long after its last renewal.
    lease_seconds: float = 300.0
    # Monthly identity job: facts reinforced this often over at least this many days
    # move up one temporal level (preferences and identity predicates up to level 4).
    identity_min_reinforcements: int = 3
    identity_min_span_days: float = 7.0
    # Sleep cycles recorded per scope (the newest; older records are dropped).
    sleep_runs_kept: int = 1000

    def __post_init__(self) -> None:
        _check(self)
        if self.sleep_runs_kept < 1:
            raise ConfigError("ConsolidationConfig.sleep_runs_kept must be at least 1")
        if self.on_new_session not in ("sync", "background", "off"):
            raise ConfigError(
                "ConsolidationConfig.on_new_session must be 'sync', 'background' or 'off', "
                f"got {self.on_new_session!r}"
            )
        if self.llm_attempts < 1:
            raise ConfigError("ConsolidationConfig.llm_attempts must be at least 1")
        if self.lease_seconds <= 0:
            raise ConfigError("ConsolidationConfig.lease_seconds must be above 0")
        if not 0 < self.hebbian_max_weight <= 1:
            raise ConfigError("ConsolidationConfig.hebbian_max_weight must be in (0, 1]")


@dataclass(frozen=True, kw_only=True)
class GraphConfig:
    pagerank_damping: float = 0.85
    pagerank_iterations: int = 20
    # Edge weight given to a learning's link to each of its evidence memories (seed 001).
    evidence_edge_weight: float = 0.8
    # Edge weight between consecutive episodes of one session.
    session_edge_weight: float = 0.5

    def __post_init__(self) -> None:
        _check(self)
        if not 0 < self.pagerank_damping < 1:
            raise ConfigError("GraphConfig.pagerank_damping must be in (0, 1)")


@dataclass(frozen=True, kw_only=True)
class EmbeddingConfig:
    # "local" (packaged MiniLM int8 ONNX) or "openai:<model>" (needs ucma[openai]).
    model: str = "local"
    batch_size: int = 64
    lru_size: int = 256
    # Vectors of texts derived from memories (a memory's text without the names a
    # query asks about, retrieval/name_free.py) kept in memory, whatever lru_size:
    # recall reads the same memories about a person question after question. Observe
    # makes them, and with persistent_cache they are stored beside the query vectors.
    derived_lru_size: int = 4096
    persistent_cache: bool = True
    # New query vectors are written to the persistent cache this many at a time
    # (and on close), not one write per query.
    persistent_cache_batch: int = 32
    base_url: str | None = None
    dimension: int | None = None

    def __post_init__(self) -> None:
        _check(self)
        if self.batch_size < 1:
            raise ConfigError("EmbeddingConfig.batch_size must be at least 1")
        if self.persistent_cache_batch < 1:
            raise ConfigError("EmbeddingConfig.persistent_cache_batch must be at least 1")
        if self.lru_size < 0 or self.derived_lru_size < 0:
            raise ConfigError("EmbeddingConfig.lru_size and derived_lru_size must be 0 or more")


_RETRIEVAL_CHANNELS = ("dense", "keyword", "entity", "temporal", "tags")


@dataclass(frozen=True, kw_only=True)
class RetrievalConfig:
    """Retrieval channels, fusion, context, graph expansion and ranking.

    The defaults are the pipeline that scored best on the retrieval benchmark
    (docs/retrieval.md); ``RetrievalConfig.ablation`` builds the baselines it
    is compared with.
    """

    max_results: int = 10
    max_results_limit: int = 100  # seed 003 R8
    # Channels and the candidates each contributes (seed 003 R6: 100 vector, 50 keyword).
    channels: tuple[str, ...] = _RETRIEVAL_CHANNELS
    vector_candidates: int = 100
    keyword_candidates: int = 50
    # Dense search turns approximate (an HNSW graph, usearch) in scopes of at least
    # ann_threshold live memories (0: always exact); HNSW's M, efConstruction and
    # efSearch follow. Chosen with bench/vector_index.py (docs/retrieval.md).
    ann_threshold: int = 20_000
    ann_connectivity: int = 16
    ann_expansion_add: int = 128
    ann_expansion_search: int = 128
    # Score every candidate's cosine, not only the dense channel's top k.
    dense_for_all_candidates: bool = True
    # Seed 001's minimum cosine for a dense-only candidate.
    semantic_min_similarity: float = 0.0
    # A hit whose relevance (confidence's first factor: cosine and keyword match,
    # see retrieval/confidence.py) is below this is not returned, so a query about
    # nothing the scope holds finds nothing; neighbours of a hit are exempt. 0.04 on
    # the cosine scale of CascadeConfig (0.20 to 0.65) is about the cosine 0.05 was on
    # the earlier 0.20 to 0.60 (0.22; 0.12 for a query embedded without its names).
    min_relevance: float = 0.04
    # Seed 003: memories below this effective salience are not retrieved.
    min_salience: float = 0.05
    # Keyword scoring: BM25 saturation and length normalisation, and the weight
    # of the context field (previous turn, date) relative to content. Less
    # normalisation helps sentence-sized memories but lets long answers win on
    # BEAM (docs/retrieval.md): the standard 0.75 stays.
    keyword_k1: float = 1.2
    keyword_b: float = 0.75
    keyword_context_weight: float = 0.5
    # Fusion: "score" (normalised scores, weighted sum) or "rrf" (seed 003 R7).
    fusion: str = "score"
    score_normalisation: str = "minmax"
    # Per-channel overrides of the normalisation ("none": the raw score clipped to [0, 1]).
    # Keyword scores are already the share of the query's information a memory
    # matches (storage: BM25 over the most the query's terms allow); "max" with a
    # floor lifts the best match to 1 only when it matches at least half of it.
    channel_normalisation: dict[str, str] = field(
        default_factory=lambda: {"dense": "none", "keyword": "max"}
    )
    # Floors of the "max" normalisation per channel (see fusion.normalise).
    channel_floors: dict[str, float] = field(default_factory=lambda: {"keyword": 0.5})
    channel_weights: dict[str, float] = field(
        default_factory=lambda: {
            "dense": 0.5,
            "keyword": 0.5,
            "temporal": 0.2,
            "tags": 0.3,
        }
    )
    # The entity channel (people or entities the query names) multiplies a
    # candidate's fused score by (1 + entity_boost x match): a name narrows the
    # ranking among memories that match the question's content, and a memory that
    # only shares the name cannot outrank one that answers (0: the entity channel
    # is fused additively with its channel weight instead, the old behaviour).
    entity_boost: float = 1.0
    # A memory holding an exact identifier the query names (email, code, id, URL)
    # has its score multiplied by (1 + identifier_boost).
    identifier_boost: float = 1.0
    # Whether the names the router recognises (people who spoke: episode sources
    # and participants) stay in the embedded query. Left out, a name cannot pull
    # in lines that merely address or mention the person: kept, "What food
    # restrictions does Dana have?" ranked "Dana lives in Denver" above Dana's
    # own "I am allergic to peanuts.", and LoCoMo fell from R@10 0.805 / hit@1
    # 0.503 to 0.791 / 0.493. The cost: another speaker's line naming her ("Dana
    # is allergic to peanuts.") scores 0.15 against the name-less question.
    embed_names: bool = False
    # A standing instruction ("Always include status codes when I ask about API
    # error handling") is compared with the query by the requests it applies to as
    # well as by its whole text (retrieval/directives.py): its dense score is at
    # least its condition's cosine.
    directive_conditions: bool = True
    # An assistant reply is ranked right after the turn it answers when both are
    # found (retriever._said_before_replies): the user's words are the record. A
    # reply answers the turn before it when the two are at least this close (on
    # BEAM's first ten conversations 0.3 and 0.4 rank the same as no floor; turns
    # observed one after another without answering each other score about 0.1).
    prompts_before_replies: bool = True
    # A long reply (retriever._LONG_REPLY_CHARS) found with the turn it answers
    # goes below every other hit, unless the question speaks to the one who
    # replied ("How did you recommend ..."): it restates the turn at length and
    # took a place another memory could hold; a short reply may say what the
    # turn did not ("Deploys are frozen on Fridays") and keeps its place. BEAM
    # (ten conversations) R@10 0.570 -> 0.600 (contradiction resolution 0.807
    # -> 0.855, knowledge update 0.821 -> 0.883, preference following 0.719 ->
    # 0.772, temporal 0.775 -> 0.900; information extraction
    # 0.567 -> 0.542, where the evidence was a reply), hit@1 0.464 unchanged,
    # confidence AUC 0.864 -> 0.860; everyday unchanged (its replies are short);
    # LoCoMo has no assistant. Moved only below the fifth or tenth hit, R@10 was
    # 0.570 / 0.579; from 300 to 1,500 characters the same 0.600.
    # "Speaks to the one who replied" once meant any "you", so requests for new
    # advice ("How would you suggest I break up my editing week?") kept the
    # replies; it means asking what they said (people.asks_what_listener_said:
    # "did you", "your advice", a summary, "our conversations"). BEAM (all 20)
    # R@10 0.592 -> 0.596, preference following 0.615 -> 0.650 (dense 0.620),
    # other categories and hit@1 unchanged, AUC 0.854 unchanged; counting "our
    # conversations" as a request too gave event ordering 0.161 -> 0.186 but AUC
    # 0.848.
    replies_after_others: bool = True
    # A question about the one asking ("What genre should you queue up for me?")
    # ranks a line about someone it names ("My flatmate Sofia listens to baroque
    # nonstop") at this share of its score. Everyday top-1 75.9 -> 78.1 % (0.5
    # the same); LoCoMo, paraphrase unchanged, BEAM (ten conversations) 0.561 ->
    # 0.562 R@10. As a confidence factor too it flagged more answerable
    # questions (12.7 -> 13.5 %) for a point more of the unanswerable: not kept.
    other_person_factor: float = 0.7
    # A question naming a person the scope's memories mention without knowing
    # them as a participant ("Which eating style does my teammate Felix stick
    # to?") ranks a memory not mentioning them ("Update: Bruno always picks
    # Ethiopian when we eat out") at this share of its score; a name counts as a
    # person when the query or a memory mentioning it says so (known_people:
    # "my teammate Felix", "Felix Brandt", "Felix's cat"), not a product or a
    # place. Everyday (no sleep) top-1 83.1 -> 84.3 % (0.7 the same, 0.9:
    # 83.9); LoCoMo R@10 0.797 unchanged, hit@1 0.497 -> 0.499; BEAM (ten
    # conversations) R@10 0.568 -> 0.570, hit@1 0.464 unchanged. Without the
    # person test BEAM's product names paid for it (R@10 0.564, contradiction
    # resolution 0.807 -> 0.782). 1 turns it off.
    unmentioned_factor: float = 0.85
    # A later short statement marking a change ("Omar switched to Northwind
    # Freight recently") goes above an earlier one about the same people among
    # the best changes_window hits when its cosine (without shared names) is at
    # least changes_min_cosine and at most changes_margin below the earlier
    # one's. Everyday top-1 78.1 -> 79.1 %, current above stale 81.9 -> 85.0 %;
    # LoCoMo, paraphrase and BEAM (ten conversations) unchanged. Without the
    # floor, changes about another attribute of the person moved up (top-1
    # 78.9 %); a margin of 0.2 moved more changes up (87.5 %) but cost top-1
    # (76.5 %); moving uncued later statements too cost top-1 (77.9 %); any cue
    # in a long message (BEAM) cost hit@1 0.464 -> 0.430. 0 turns it off.
    changes_window: int = 3
    changes_margin: float = 0.05
    changes_min_cosine: float = 0.25
    # A later statement that marks no change goes above an earlier one the same
    # way when both state one value in one short sentence, share no content word
    # beyond the query's and the people's (two values, not two words on one:
    # "My yoga class is on Fridays" / "Wednesday evenings are for yoga") and the
    # later answers the query at most changes_uncued_margin less well: when the
    # query cannot tell them apart, the later value is the current one. The one
    # passed keeps its place below (demoting it below the top 5 as for cued
    # changes cost paraphrase R@5 0.978 -> 0.961: its distractors are
    # neighbouring attributes of the same person). Everyday (no sleep) top-1
    # 84.9 -> 85.7 %, change top-1 73.8 -> 76.9 %, current above stale 86.2 ->
    # 87.5 % (margin 0.03: 76.2 % and 86.9 %). 0.10 (Bruno's "listens to jazz
    # nonstop" after "is really into afrobeat", name-free cosines 0.42 / 0.49):
    # everyday top-1 +0.8 points, current above stale 91.9 -> 93.1 %, but
    # paraphrase R@1 0.708 -> 0.689, a neighbouring attribute said later passing
    # the answer. 0 turns it off.
    changes_uncued_margin: float = 0.05
    # The earlier short statements about the same people that a later change
    # among the best changes_demote_window hits answers the query as well as
    # (cosines without shared names within changes_demote_gap) and says much
    # the same as (the two memories' cosine at least changes_demote_pair) go
    # below those hits: supersession at observe time missed them, the query
    # says which attribute is asked. Everyday (no sleep): no stale value in the
    # top 5 68.8 -> 76.9 %, top-1 79.1 % unchanged; LoCoMo R@10 0.798
    # unchanged, hit@1 0.487 -> 0.490. Without the pair floor a change about
    # another attribute of the person pushed the answer down (top-1 78.5 %);
    # moving them to the end of the list instead cost LoCoMo R@10 (0.792).
    # 0 turns it off.
    changes_demote_window: int = 5
    changes_demote_gap: float = 0.2
    changes_demote_pair: float = 0.5
    # A later message from the same speaker goes above an earlier one among the
    # best changes_window hits when both give a value (a number in the sentence
    # sharing most of the query's words) for what a question about how things are
    # asks, the two say much the same (cosine at least changes_demote_pair) and the
    # later scores at most this share below (retriever._later_values_first): the
    # statement rules above leave messages that are not short statements alone.
    # BEAM (all twenty) hit@1 0.448 -> 0.451, fresh-first 0.325 -> 0.350, AUC
    # 0.856 -> 0.857, R@10 0.592 unchanged (first eleven: hit@1 0.467 -> 0.472;
    # without the value test, any later message within 10 %: 0.452); LoCoMo R@10
    # 0.802 / hit@1 0.499 / AUC 0.8515 and everyday (no sleep) unchanged;
    # paraphrase R@1 0.708, R@10 0.992. 0 turns it off.
    changes_long_margin: float = 0.15
    # A question about how things are (no event in it: "When should I wish Mei
    # many happy returns?") ranks a short line that says nothing lasting (an
    # event, a plan, a request: "Had lunch with Mei near the river", at most 16
    # words) at this share of its score. Everyday (no sleep) top-1 79.1 ->
    # 82.3 %; LoCoMo R@10 0.798 unchanged, hit@1 0.490 -> 0.496. Without the
    # length bound long messages telling events lost (LoCoMo hit@1 0.483);
    # 0.85 and 0.95 gave 81.7 and 80.5 % top-1. 1 turns it off.
    event_factor: float = 0.9
    # Such a line that only asks for something ranks at this share again: a
    # request or a plan ("Remind me to pay the electricity bill this weekend.", "I
    # think I'll book the dentist after dinner.": conflicts.statements.
    # only_requests), or a question a role asks (the user of an assistant: "What's
    # a good way to call the plumber quickly?"). It tells nothing of how anyone
    # is; its words ("dinner", "call") were what matched. Everyday (no sleep)
    # top-1 88.8 -> 90.2 %, current above stale 91.9 -> 92.5 %, answers 78.5 ->
    # 78.9 % (0.65: top-1 89.4 %); LoCoMo R@10 0.802, hit@1 0.499 -> 0.500, AUC
    # 0.852; BEAM (R@10 0.592, hit@1 0.451, AUC 0.854) and paraphrase (R@1 0.708)
    # unchanged. Questions between people counted too ("What got you into
    # running?") cost LoCoMo AUC 0.852 -> 0.849: with them lower, lines about the
    # wrong speaker led and made its category-5 questions surer. 1 turns it off.
    request_factor: float = 0.8
    # A question about how things are that asks for a time or a quantity ranks a
    # memory holding none at this share of its score (retrieval/answer_kinds.py):
    # "When should I wish Mateo many happy returns?" is answered by "... Mateo's
    # birthday, October 23", not by "My teammate Mateo is engaged". 1 turns it off.
    missing_kind_factor: float = 0.8
    reply_prompt_cosine: float = 0.4
    # A keyword match counts by how related the memory is by meaning: its keyword
    # score enters fusion times 0 at a cosine (the dense score, name-free blend
    # included) of at most the first value, 1 from the second on, linear between
    # (fusion.weighed_by_meaning; None: not scaled); both ends move down by
    # CascadeConfig.unnamed_cosine_shift for a query embedded without its names.
    # A long reply shares most common words of any question; on BEAM such replies
    # with cosines of 0.14 to 0.2 outranked the user's statement that held the
    # answer at 0.5. Confidence still reads the unscaled match.
    keyword_cosine_ramp: tuple[float, float] | None = (0.1, 0.3)
    # For a query naming people, the dense score of each of the (at most
    # name_free_candidates, closest first) memories naming them mixes in this
    # share of their cosine with both texts' names put as a pronoun: a shared
    # name lifts a short text's cosine whatever else it says, so among memories
    # about one person what is asked should decide (retrieval/name_free.py).
    name_free_weight: float = 0.5
    name_free_candidates: int = 50
    rrf_k: int = 60
    # Session prior: episodes of sessions matching the query as a whole gain this much.
    session_prior: float = 0.4
    # Context around a hit: neighbours within the window inherit share ** distance.
    context_window: int = 1
    context_share: float = 0.5
    context_top: int = 20
    # Graph expansion (seed 001): top-k seeds, edge weight floor, discount.
    graph_expansion: bool = True
    graph_expansion_top_k: int = 3
    graph_expansion_min_weight: float = 0.50
    graph_expansion_discount: float = 0.7
    # Ranking preset (ranking.RANKING_PRESETS) and its parameters.
    ranking: str = "salient"
    # Strength of the heuristic base salience in the "salient" preset (0: relevance
    # and the learned outcome adjustment alone). 0 by measurement: the base (seed
    # 003 R2 gives "I prefer ..." 1.0, other lines ~0.36) put statements of one
    # shape above better answers (everyday set top-1 55.4% -> 59.4% without it;
    # LoCoMo R@10 0.808 -> 0.805, hit@1 0.501 -> 0.503; paraphrase R@1 0.608 -> 0.603).
    salience_weight: float = 0.0
    # Strength of the learned outcome adjustment in "salient": score x (1 + w x adjustment).
    outcome_weight: float = 1.0
    rank_pool_factor: int = 3
    weight_relevance: float = 0.40
    weight_importance: float = 0.25
    weight_recency: float = 0.20
    weight_retention: float = 0.15
    recency_halflife_days: float = 7.0
    # Retrieval counts as a review in the retention model (seed 001).
    reinforce_on_retrieval: bool = True

    def __post_init__(self) -> None:
        _check(self)
        unknown = set(self.channels) - set(_RETRIEVAL_CHANNELS)
        if unknown:
            raise ConfigError(
                f"RetrievalConfig.channels: unknown {sorted(unknown)}; "
                f"use {list(_RETRIEVAL_CHANNELS)}"
            )
        if self.fusion not in ("score", "rrf"):
            raise ConfigError("RetrievalConfig.fusion must be 'score' or 'rrf'")
        if (
            self.event_factor > 1
            or self.request_factor > 1
            or self.missing_kind_factor > 1
            or self.other_person_factor > 1
            or self.unmentioned_factor > 1
        ):
            raise ConfigError(
                "RetrievalConfig.event_factor, request_factor, missing_kind_factor, "
                "other_person_factor and unmentioned_factor must be <= 1"
            )
        if self.keyword_cosine_ramp is not None:
            ramp = tuple(self.keyword_cosine_ramp)
            if len(ramp) != 2 or not all(isinstance(v, int | float) for v in ramp):
                raise ConfigError("RetrievalConfig.keyword_cosine_ramp must be two cosines or None")
            low, high = float(ramp[0]), float(ramp[1])
            if not -1.0 <= low < high <= 1.0:
                raise ConfigError(
                    "RetrievalConfig.keyword_cosine_ramp needs -1 <= low < high <= 1, "
                    f"got {self.keyword_cosine_ramp!r}"
                )
            object.__setattr__(self, "keyword_cosine_ramp", (low, high))
        if self.name_free_weight > 1 or self.name_free_candidates < 1:
            raise ConfigError(
                "RetrievalConfig needs name_free_weight <= 1 and name_free_candidates >= 1"
            )
        if not (
            0 < self.keyword_k1 <= 10 and self.keyword_b <= 1 and self.keyword_context_weight <= 10
        ):
            raise ConfigError(
                "RetrievalConfig needs 0 < keyword_k1 <= 10, keyword_b <= 1 and "
                "keyword_context_weight <= 10"
            )
        for method in (self.score_normalisation, *self.channel_normalisation.values()):
            if method not in ("max", "minmax", "none"):
                raise ConfigError("score normalisation must be 'max', 'minmax' or 'none'")
        from ucma.retrieval.ranking import RANKING_PRESETS

        if self.ranking not in RANKING_PRESETS:
            raise ConfigError(f"RetrievalConfig.ranking must be one of {sorted(RANKING_PRESETS)}")
        self.ann_settings()

    def ann_settings(self) -> AnnSettings:
        """The storage's settings for approximate dense search."""
        from ucma.errors import ValidationError
        from ucma.storage.base import AnnSettings

        try:
            return AnnSettings(
                threshold=self.ann_threshold,
                connectivity=self.ann_connectivity,
                expansion_add=self.ann_expansion_add,
                expansion_search=self.ann_expansion_search,
            )
        except ValidationError as exc:
            raise ConfigError(f"RetrievalConfig.ann_*: {exc}") from exc

    @classmethod
    def ablation(cls, name: str) -> RetrievalConfig:
        """Baselines for the benchmark: "keyword" (BM25 only), "dense" (vectors
        only) or "rrf" (plain RRF of the two); nothing else of the pipeline."""
        bare = {
            "context_window": 0,
            "graph_expansion": False,
            "ranking": "relevance",
            "keyword_context_weight": 0.0,
            "directive_conditions": False,
            "prompts_before_replies": False,
            "replies_after_others": False,
            "other_person_factor": 1.0,
            "unmentioned_factor": 1.0,
            "changes_window": 0,
            "changes_demote_window": 0,
            "changes_long_margin": 0.0,
            "event_factor": 1.0,
            "request_factor": 1.0,
            "missing_kind_factor": 1.0,
            "keyword_cosine_ramp": None,
        }
        if name == "keyword":
            return cls(channels=("keyword",), **bare)  # type: ignore[arg-type]
        if name == "dense":
            return cls(channels=("dense",), **bare)  # type: ignore[arg-type]
        if name == "rrf":
            return cls(
                channels=("dense", "keyword"),
                fusion="rrf",
                channel_weights={"dense": 1.0, "keyword": 1.0},
                **bare,  # type: ignore[arg-type]
            )
        raise ConfigError(f"unknown ablation {name!r}; use keyword, dense or rrf")


@dataclass(frozen=True, kw_only=True)
class ForgettingConfig:
    retention_threshold: float = 0.10
    importance_protection: float = 0.01
    stability_boost_base: float = 0.50
    # Seed 003 R21.
    prune_salience_threshold: float = 0.05
    archive_retention_days: float = 30.0
    # Protection thresholds (issue 4 / seed 001 chapter 20).
    protect_procedure_success_rate: float = 0.5
    protect_learning_confidence: float = 0.6
    # PageRank protection: a memory is protected when its PageRank exceeds both
    # ``importance_protection`` (seed 001's absolute 0.01) and this multiple of the
    # uniform share 1/n. The absolute test alone protects every node of a graph of
    # fewer than 100 nodes; the relative one keeps the rule meaningful at any size.
    pagerank_protection_ratio: float = 3.0
    # R20: an outcome of quality q in [-1, 1] multiplies stability by
    # (1 + gain * q * attribution * dampening(level)) when q >= 0 and divides it by
    # (1 + gain * |q| * attribution * dampening(level)) when q < 0 (ucma.memory.retention).
    outcome_stability_gain: float = 0.5
    # Importance weighting: the retention threshold is multiplied by
    # max(this, 2 * (1 - effective salience)) (1 at salience 0.5).
    salience_weight_floor: float = 0.1
    # False turns forgetting off: nothing is archived or purged (compression then
    # promotes every expired episode instead of archiving the unimportant ones).
    enabled: bool = True

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True, kw_only=True)
class ProcedureConfig:
    """How evidence moves a procedure's status (seed 001 chapter 14: draft, active,
    deprecated). ``ucma.learning.procedures`` applies it after every execution.

    No verdict before ``min_executions`` runs: the seed trusts a success rate only
    gradually (fully after ten runs), and five is the first point where one run
    cannot flip it. Then a success rate at or above ``activate_success_rate`` makes
    a draft (or deprecated) procedure active, and one below
    ``deprecate_success_rate`` deprecates it; between the two the status stays as
    it is, so one outcome near a bar does not make it flap. Active procedures above
    ``ForgettingConfig.protect_procedure_success_rate`` (0.5) are kept from forgetting.
    """

    min_executions: int = 5
    activate_success_rate: float = 0.7
    deprecate_success_rate: float = 0.3
    merge_similarity: float = 0.9
    """A learned strategy or pitfall merges into one of the same type and domain whose
    title (its steps) has at least this cosine: paraphrases of one plan are 0.95 and up
    with the packaged model, plans differing in one step 0.5 to 0.85."""
    min_relevance: float = 0.3
    """``strategies_for`` drops procedures less related to the task than this cosine."""
    has_strategy_relevance: float = 0.6
    """``has_strategy_for`` is true when a non-pitfall at least this related applies."""

    def __post_init__(self) -> None:
        _check(self)
        if self.min_executions < 1:
            raise ConfigError("ProcedureConfig.min_executions must be at least 1")
        for name in ("merge_similarity", "min_relevance", "has_strategy_relevance"):
            if not 0 <= getattr(self, name) <= 1:
                raise ConfigError(f"ProcedureConfig.{name} must be in [0, 1]")
        if not 0 <= self.deprecate_success_rate < self.activate_success_rate <= 1:
            raise ConfigError(
                "ProcedureConfig needs 0 <= deprecate_success_rate < activate_success_rate <= 1, "
                f"got {self.deprecate_success_rate} and {self.activate_success_rate}"
            )


@dataclass(frozen=True, kw_only=True)
class SalienceConfig:
    """Seed 003 R15 to R18: outcome-weighted salience."""

    learning_rate: float = 0.1
    max_single_adjustment: float = 0.1
    max_cumulative_adjustment: float = 0.5
    min_attribution: float = 0.01
    outcome_window_days: float = 7.0
    # R17's table; it wins over R15's 1/level.
    temporal_dampening: dict[int, float] = field(
        default_factory=lambda: {1: 1.0, 2: 0.5, 3: 0.25, 4: 0.1}
    )

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True, kw_only=True)
class PatternConfig:
    """Causal analysis, pattern extraction and shared patterns (seed 003)."""

    # A memory's verdict needs this many outcomes; |weighted mean quality| >= threshold.
    min_decisions: int = 3
    verdict_threshold: float = 0.3
    # High performers: mean quality above this (seed 003: outcome_quality > 0.5).
    min_quality: float = 0.5
    # Cosine similarity that puts two memories (or two users' patterns) in one cluster.
    cluster_similarity: float = 0.75
    merge_similarity: float = 0.8
    # Seed 003 privacy thresholds and budget for shared patterns.
    privacy_min_instances: int = 100
    privacy_min_users: int = 10
    epsilon: float = 0.1

    def __post_init__(self) -> None:
        _check(self)
        if not self.epsilon > 0:
            raise ConfigError("PatternConfig.epsilon must be > 0")


@dataclass(frozen=True, kw_only=True)
class ConflictConfig:
    """Seed 002's decision-tree thresholds, the predicate registry and review weights.

    ``functional_predicates`` / ``multi_valued_predicates`` add to (and win
    over) the built-in registry of ``ucma.conflicts.predicates``;
    ``unknown_predicates_functional`` decides predicates neither the lists nor
    the naming heuristic recognise (False: they never conflict, so nothing is
    retired on a guess).
    """

    temporal_threshold_days: float = 30.0
    confidence_threshold: float = 0.2
    reinforcement_threshold: int = 3
    min_confidence_for_conflict: float = 0.4
    # memory_vs_db: the memory's confidence is multiplied by this (seed: 0.5).
    conflict_decay_factor: float = 0.5
    # keep_highest_confidence: the loser's confidence is multiplied by this (seed: 0.8).
    loser_decay_factor: float = 0.8
    # Confidence of a value taken from a source of truth (seed 002: new_confidence 1.0).
    source_confidence: float = 1.0
    functional_predicates: tuple[str, ...] = ()
    multi_valued_predicates: tuple[str, ...] = ()
    unknown_predicates_functional: bool = False
    # Ranking score multiplier for memories flagged for review and for superseded facts.
    review_rank_factor: float = 0.5
    # How far dependency invalidation follows derived_from / supports edges.
    review_max_hops: int = 3

    def __post_init__(self) -> None:
        _check(self)
        for name in ("functional_predicates", "multi_valued_predicates"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"ConflictConfig.{name} must be a list of strings")
            object.__setattr__(self, name, tuple(value))
        if self.review_rank_factor > 1 or self.conflict_decay_factor > 1:
            raise ConfigError("ConflictConfig decay and rank factors must be in [0, 1]")
        if self.loser_decay_factor > 1 or self.source_confidence > 1:
            raise ConfigError("ConflictConfig decay factors and confidences must be in [0, 1]")


@dataclass(frozen=True, kw_only=True)
class OpinionConfig:
    """Opinion evolution (seed 000: "gradual belief update, not sudden reversal";
    ``ucma.paradigms.opinions``). Evidence of weight w moves a confidence c to
    c + rate * w * (1 - c) when it supports the opinion and to c * (1 - rate * w)
    when it goes against it; below ``replace_below`` the new stance replaces it."""

    # Seed 000's post-interaction learning forms an opinion at 0.6.
    initial_confidence: float = 0.6
    rate: float = 0.5
    replace_below: float = 0.35
    # The weight of evidence that only agrees or disagrees, and of a change the
    # holder states ("switched to", "no longer", "now prefers"): one plain piece of
    # contrary evidence never replaces an opinion held at 0.47 or more; a stated
    # change replaces one held below 0.7, a firmer one needs a second.
    plain_weight: float = 0.5
    change_weight: float = 1.0
    # find_opinion: the least cosine between the topic asked and the statement of an
    # opinion, and how many memories nearest the topic (the vector index's) it looks
    # up for opinions they state; also how many current opinions an observed
    # statement is checked against for supersession.
    min_topic_cosine: float = 0.55
    max_candidates: int = 500

    def __post_init__(self) -> None:
        _check(self)
        for name in ("initial_confidence", "rate", "replace_below", "plain_weight"):
            if getattr(self, name) > 1:
                raise ConfigError(f"OpinionConfig.{name} must be in [0, 1]")
        if not 0 < self.change_weight <= 1 or self.plain_weight == 0:
            raise ConfigError("OpinionConfig weights must be in (0, 1]")
        if self.replace_below >= self.initial_confidence:
            raise ConfigError("OpinionConfig.replace_below must be below initial_confidence")


@dataclass(frozen=True, kw_only=True)
class PredictiveConfig:
    """Seed 000's predictive paradigm: the world model, the self-model and
    competence-aware help-seeking (``ucma.paradigms.world_model``,
    ``self_model``, ``help_seeking``).

    A transition whose reliability is above ``promote_above`` (seed 000: "patterns
    above 0.9 confidence") after at least ``promote_min_support`` observations of its
    action in its context becomes a world fact. Uncertainty is reported as a central
    ``interval`` credible interval of the Beta posterior.
    """

    promote_above: float = 0.9
    promote_min_support: int = 10
    interval: float = 0.95
    weak_below: float = 0.5
    """A capability is weak when its estimated accuracy is below this ..."""
    weak_min_samples: int = 5
    """... after at least this many recorded attempts."""
    recurring_failure_count: int = 3
    """Seed 000 pattern 4: a failure mode seen this often is a learning priority."""
    min_capability_cosine: float = 0.6
    """``introspect`` without a capability: the least cosine between the task and a
    known capability's name when no capability's words all appear in the task."""
    experience_relevance: float = 0.5
    """``should_attempt``: past experiences at least this related to the task count."""
    evidence_kept: int = 20
    """Recent outcomes each capability keeps as its evidence."""
    calibration_bins: int = 10
    max_transitions: int = 1000
    """``simulate`` reads at most this many transitions of one action."""

    def __post_init__(self) -> None:
        _check(self)
        for name in (
            "promote_above",
            "weak_below",
            "min_capability_cosine",
            "experience_relevance",
        ):
            if not 0 <= getattr(self, name) <= 1:
                raise ConfigError(f"PredictiveConfig.{name} must be in [0, 1]")
        if not 0 < self.interval < 1:
            raise ConfigError("PredictiveConfig.interval must be in (0, 1)")
        for name in (
            "promote_min_support",
            "weak_min_samples",
            "recurring_failure_count",
            "evidence_kept",
            "calibration_bins",
            "max_transitions",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"PredictiveConfig.{name} must be an integer >= 1")


@dataclass(frozen=True, kw_only=True)
class GoalConfig:
    """Goals (seed 000's predictive paradigm; ``ucma.engine.goals``).

    A task of a goal is a skill gap when memory holds no strategy for it, or when its
    best strategy succeeded less than ``weak_below`` of at least ``min_samples``
    applications. ``statement_candidates`` observed statements (by keyword match) and
    ``max_open`` open goals are what a conflict check reads per scope; ``max_topics``
    the things one goal is checked for in ``anticipate``."""

    weak_below: float = 0.5
    min_samples: int = 3
    statement_candidates: int = 50
    max_open: int = 200
    max_topics: int = 8

    def __post_init__(self) -> None:
        _check(self)
        if self.weak_below > 1:
            raise ConfigError("GoalConfig.weak_below must be in [0, 1]")
        if min(self.min_samples, self.statement_candidates, self.max_open, self.max_topics) < 1:
            raise ConfigError("GoalConfig counts must be at least 1")


@dataclass(frozen=True, kw_only=True)
class SynthesisConfig:
    """``synthesize`` and ``post_interaction`` (seed 000's response synthesis and
    post-interaction learning; ``ucma.engine.synthesis``).

    ``synthesize`` returns the preferences (current opinions) and active goals at least
    ``preference_relevance`` / ``goal_relevance`` related to the query (cosine),
    ``strategy_candidates`` ranked strategies for the advice it gives, and flags a
    prediction as uncertain when its most likely outcome's credible interval is wider
    than ``uncertain_width`` or rests on fewer than ``uncertain_support`` observations.
    Per scope it caches at most ``max_opinions`` opinions, ``max_goals`` active goals
    and the strategies of ``strategy_tasks`` recent tasks (seed 000's caching
    strategy), each entry checked against the event log on every read.
    ``post_interaction`` keeps at most ``response_chars`` of the response in the
    experience record's metadata."""

    preference_relevance: float = 0.3
    goal_relevance: float = 0.3
    strategy_candidates: int = 10
    uncertain_width: float = 0.3
    uncertain_support: float = 3.0
    max_opinions: int = 1000
    max_goals: int = 200
    strategy_tasks: int = 64
    response_chars: int = 500

    def __post_init__(self) -> None:
        _check(self)
        for name in ("preference_relevance", "goal_relevance", "uncertain_width"):
            if not 0 <= getattr(self, name) <= 1:
                raise ConfigError(f"SynthesisConfig.{name} must be in [0, 1]")
        counts = (
            self.strategy_candidates,
            self.max_opinions,
            self.max_goals,
            self.strategy_tasks,
            self.response_chars,
        )
        if min(counts) < 1:
            raise ConfigError("SynthesisConfig counts must be at least 1")


@dataclass(frozen=True, kw_only=True)
class CascadeConfig:
    """Seed 004: five-factor confidence and cascading recall."""

    confidence_threshold: float = 0.5
    max_depth: int = 2
    overfetch_factor: int = 3
    primary_weight: float = 0.7
    secondary_weight: float = 0.3
    # A layer's confidence is its results' overall confidences, each discounted by
    # this per rank below the first, at their best (retrieval/cascade.py). Seed 004
    # reads the first result alone (0); the best of all (1) let a line about
    # someone else vouch for a question nothing answers. Confidence AUC at 1 / 0.9
    # / 0: everyday 0.889 / 0.903 / 0.906, LoCoMo 0.770 / 0.810 / 0.811, BEAM's
    # first ten conversations 0.881 / 0.867 / 0.853.
    confidence_rank_discount: float = 0.9
    # Layer weight in the merge composite: the primary layer 1.0, then these in order.
    secondary_layer_weights: tuple[float, ...] = (0.7, 0.5, 0.4)
    weight_semantic_relevance: float = 0.35
    weight_source_quality: float = 0.25
    weight_recency: float = 0.15
    weight_consistency: float = 0.15
    weight_completeness: float = 0.10
    # Relevance, the first factor (retrieval/confidence.py): a cosine at or below
    # relevance_floor_cosine counts 0 (unrelated text scores about that with the
    # packaged MiniLM), at relevance_full_cosine 1; combined with the share of
    # the query's keyword information the memory matches.
    # relevance_full_cosine 0.60 -> 0.65 with relevance_gate 0.5 -> 0.42 (below): a
    # generic reply such as "Aww, childhood memories can be so powerful!" reached full
    # relevance on LoCoMo's category-5 questions. LoCoMo confidence AUC 0.849 -> 0.855
    # (hit@10 0.859 -> 0.857), everyday low_confidence on answerable 20.7 -> 19.9 %
    # at 88.7 % of unanswerable (AUC 0.911 -> 0.907); 0.70 with a gate of 0.40 gave
    # LoCoMo 0.859 and everyday 22.3 %, 0.70 alone 0.857 and 30.3 %.
    relevance_floor_cosine: float = 0.20
    relevance_full_cosine: float = 0.65
    # Both ends of that scale move down by unnamed_cosine_shift for a query
    # embedded without its names (router.QueryPlan.semantic_text): it shares no
    # name with what it matches, so its cosines run lower. They move up by
    # shared_name_cosine_shift for a memory that holds a name the embedded query
    # holds: the name alone lifts the cosine ("What is Alice's blood type?"
    # against "Alice likes dark mode" scores like a real match would unnamed).
    unnamed_cosine_shift: float = 0.10
    shared_name_cosine_shift: float = 0.15
    # They move down by speaker_cosine_shift for a question about the one asking
    # and a short line of someone's own that says how they are ("What town do I
    # reside in?" / "I've been based in Auckland since uni.": cosine 0.29): the
    # two share nothing but meaning, and such a paraphrase scores lower than one
    # about a named person does without the name (retriever._own_lasting_line).
    # 42 % of the everyday set's answerable questions about the asker were low
    # confidence, 8 % of the others. After one sleep, at 0 / 0.08 / 0.12:
    # low_confidence on answerable 15.5 / 10.8 / 9.2 %, on unanswerable 89.6 /
    # 89.6 / 88.7 %, AUC 0.925 / 0.942 / 0.946, answer 79.1 / 83.3 / 84.3 %;
    # BEAM AUC 0.854 / - / 0.851 (its long messages and questions barely move),
    # LoCoMo unchanged (0.852: its questions name whom they ask about).
    speaker_cosine_shift: float = 0.12
    # The weighted sum is scaled by min(1, relevance / relevance_gate): without a
    # match, no confidence (0 turns the gate off: the seed's plain sum).
    relevance_gate: float = 0.42
    # A memory not involving the person the query names keeps this share of its
    # relevance; a line the named person says to someone else ("you're killing it!")
    # involves its listener, not them. LoCoMo confidence AUC 0.730 at 0.7, 0.745 at
    # 0.5 (category 5 asks about the wrong speaker); everyday unchanged. With lines
    # that call the listener by name and ask them something counted as theirs
    # (people.speaks_to_listener): LoCoMo AUC 0.831 at 0.5, 0.848 at 0.35, 0.850 at
    # 0.3, 0.851 at 0.25 (R@10 0.801, 0.800, 0.797, 0.794: more recalls cascade);
    # everyday AUC 0.894, 0.898, 0.898, 0.899, its top-1 and answers unchanged.
    off_subject_factor: float = 0.3
    # For a question about how things are (no event in it), a short line that
    # says nothing lasting (an event, a plan, a request: "Had lunch with Rafael
    # near the river") counts this share of its relevance: it may be the best
    # match, it does not say what was asked ("How tall is Rafael?"). Confidence
    # AUC at 1 / 0.85 / 0.7 / 0.5: everyday (no sleep) 0.887 / 0.891 / 0.893 /
    # 0.892 (low_confidence on unanswerable 77.4 / 81.1 / 84.9 / 86.8 %, on
    # answerable 16.7 / 18.9 / 20.1 / 22.5 %), LoCoMo 0.810 / - / 0.816 / -,
    # BEAM's first ten conversations 0.860 / - / 0.859 / -; recall's ranks
    # unchanged at 0.7 (LoCoMo R@10 0.797, BEAM 0.600, everyday top-1 84.7 %).
    passing_line_factor: float = 0.7
    # For a question about how things are that asks for a time or a quantity
    # ("When should I wish Omar many happy returns?", "How tall is Rafael?"), a
    # memory holding none ("Had lunch with Rafael near the river") keeps this share
    # of its relevance (retrieval/answer_kinds.py).
    missing_kind_factor: float = 0.6
    # The other way round: for such a question, a memory about whom it asks (its
    # named person, or the asker) that holds an answer of the kind, a date or a
    # weekday, counts that as this much evidence of answering it, combined with
    # its relevance as a noisy OR ("When should I wish Omar many happy returns?" /
    # "Omar's birthday is on July 2": the embedder reads no birthday in the idiom).
    # Numbers are not counted: any number would "answer" "How tall is Dana?".
    # Everyday (no sleep) low_confidence on answerable at 0 / 0.2 / 0.35 / 0.5:
    # 20.7 / 19.3 / 16.3 / 16.1 %, on unanswerable 88.7 % at each, AUC 0.909 /
    # 0.918 / 0.920 / 0.921, top-1 unchanged; LoCoMo AUC 0.852, R@10 0.802 and
    # hit@1 0.499 at 0 and 0.35 (its questions about when ask about events).
    offered_kind_evidence: float = 0.35
    # A query naming someone or something the scope has never mentioned (a
    # capitalised word after a sentence's first that no memory holds: "When is
    # Kofi's pottery?" where no one is called Kofi) is about nothing memory holds:
    # every memory keeps this share of its relevance, so the answer is not
    # confident however well "Rafael has pottery every Wednesday" matches the rest.
    unheard_name_factor: float = 0.25
    # Seed 004's bands: low below confidence_threshold, high from this.
    high_confidence: float = 0.75

    def __post_init__(self) -> None:
        _check(self)
        if (
            self.off_subject_factor > 1
            or self.passing_line_factor > 1
            or self.missing_kind_factor > 1
            or self.unheard_name_factor > 1
            or self.relevance_gate > 1
            or self.confidence_rank_discount > 1
            or self.offered_kind_evidence > 1
        ):
            raise ConfigError(
                "CascadeConfig.off_subject_factor, passing_line_factor, missing_kind_factor, "
                "unheard_name_factor, relevance_gate, confidence_rank_discount and "
                "offered_kind_evidence must be <= 1"
            )
        if self.missing_kind_factor <= 0:
            raise ConfigError("CascadeConfig.missing_kind_factor must be above 0")


@dataclass(frozen=True, kw_only=True)
class LimitsConfig:
    """Input limits; exceeding one raises ValidationError before anything is written."""

    max_content_chars: int = 32_000
    max_query_chars: int = 8_000
    max_batch_size: int = 10_000
    max_metadata_bytes: int = 64_000
    # Import (``ucma.exchange.LineReader``): nesting of one line's JSON, checked before it
    # is parsed; the length of a line; lines of one import; blank lines among them.
    max_json_depth: int = 64
    max_import_line_bytes: int = 4 * 1024 * 1024
    max_import_lines: int = 10_000_000
    max_blank_lines: int = 1_000
    # Scopes whose in-process state one engine keeps (ucma.lru): working memory, the
    # current session, the names and standing instructions read for routing, and the
    # search caches (vectors and keyword postings). Past it the least recently used
    # scope's state is dropped and rebuilt from storage on its next use; its working
    # memory starts empty and its next observation opens a new session, as after a
    # restart (docs/isolation.md, "Memory").
    max_scopes_in_memory: int = SCOPES_IN_MEMORY

    def __post_init__(self) -> None:
        _check(self)
        if self.max_scopes_in_memory < 1:
            raise ConfigError("LimitsConfig.max_scopes_in_memory must be at least 1")
        if self.max_json_depth < 8:
            raise ConfigError("LimitsConfig.max_json_depth must be at least 8 (a record nests 4)")


@dataclass(frozen=True, kw_only=True)
class ServiceConfig:
    """What one request to the service (``ucma serve``) may cost: its size, the time to
    send its body, and how many requests may be in progress at once (``ucma.server.limits``).

    ``ucma serve`` has a flag for each (``--max-body-bytes`` ...). Sizes are bytes,
    times seconds. Defaults suit one process on a small machine: a request body of
    1 MiB, an import of 1 GiB, 16 KiB of headers, 30 s to send a body with no pause
    over 10 s, and 32 requests at once (each may run the embedding model).
    ``trim_memory_when_idle`` gives freed memory back to the operating system when no
    request is in progress (glibc's ``malloc_trim``; ``ucma.server.trim``).
    """

    max_body_bytes: int = 1024 * 1024
    max_import_bytes: int = 1024 * 1024 * 1024
    max_header_bytes: int = 16 * 1024
    body_timeout: float = 30.0
    body_idle_timeout: float = 10.0
    max_concurrent_requests: int = 32
    retry_after_seconds: int = 1
    trim_memory_when_idle: bool = True

    def __post_init__(self) -> None:
        _check(self)
        for name in ("max_body_bytes", "max_import_bytes", "max_header_bytes"):
            if getattr(self, name) < 1024:
                raise ConfigError(f"ServiceConfig.{name} must be at least 1024 bytes")
        for name in ("body_timeout", "body_idle_timeout"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"ServiceConfig.{name} must be a positive number of seconds")
        if self.max_concurrent_requests < 1:
            raise ConfigError("ServiceConfig.max_concurrent_requests must be at least 1")
        if self.retry_after_seconds < 1:
            raise ConfigError("ServiceConfig.retry_after_seconds must be at least 1")


@dataclass(frozen=True, kw_only=True)
class PrivacyConfig:
    """The content guard's policy (seed 003 R3; docs/privacy.md).

    Each kind of finding (``ucma.privacy.ContentKind``) is ``"tokenise"``d (replaced
    by a reversible per-scope token, the original kept encrypted in the vault),
    ``"refuse"``d (the write raises ``ContentRefusedError``, ``SecretRefusedError``
    for secrets, and nothing is written) or ``"allow"``ed (stored as written).
    ``pii`` and ``secrets`` set the default of their category, ``kinds`` overrides
    single kinds (``{"ip": "allow", "email": "refuse"}``).

    ``vault_key`` is the Fernet key of the vault (the CLI and server read it from
    ``UCMA_VAULT_KEY``); without one the key lives in ``vault_key_file``, default
    ``<database>.vault-key``, created on first use with mode 0600.
    """

    pii: str = "tokenise"
    secrets: str = "refuse"
    kinds: dict[str, str] = field(default_factory=dict)
    vault_key: str | None = field(default=None, repr=False)
    vault_key_file: str | None = None

    def __post_init__(self) -> None:
        for name, action in (("pii", self.pii), ("secrets", self.secrets)):
            if action not in PRIVACY_ACTIONS:
                raise ConfigError(
                    f"PrivacyConfig.{name} must be one of {sorted(PRIVACY_ACTIONS)}, got {action!r}"
                )
        known = {kind.value for kind in ContentKind}
        for kind, action in self.kinds.items():
            if kind not in known:
                raise ConfigError(
                    f"PrivacyConfig.kinds: unknown kind {kind!r}; known: {sorted(known)}"
                )
            if action not in PRIVACY_ACTIONS:
                raise ConfigError(
                    f"PrivacyConfig.kinds[{kind!r}] must be one of {sorted(PRIVACY_ACTIONS)}, "
                    f"got {action!r}"
                )

    def action(self, kind: ContentKind) -> str:
        """What to do with a finding of ``kind``: tokenise, refuse or allow."""
        override = self.kinds.get(kind.value)
        if override is not None:
            return override
        return self.pii if kind.category.value == "pii" else self.secrets


PRIVACY_ACTIONS = frozenset({"tokenise", "refuse", "allow"})


@dataclass(frozen=True, kw_only=True)
class UCMAConfig:
    """All of UCMA's tunables. Build with keyword groups, or ``UCMAConfig.from_dict``."""

    sensory: SensoryConfig = field(default_factory=SensoryConfig)
    working: WorkingMemoryConfig = field(default_factory=WorkingMemoryConfig)
    episodic: EpisodicConfig = field(default_factory=EpisodicConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    forgetting: ForgettingConfig = field(default_factory=ForgettingConfig)
    procedures: ProcedureConfig = field(default_factory=ProcedureConfig)
    salience: SalienceConfig = field(default_factory=SalienceConfig)
    patterns: PatternConfig = field(default_factory=PatternConfig)
    conflicts: ConflictConfig = field(default_factory=ConflictConfig)
    opinions: OpinionConfig = field(default_factory=OpinionConfig)
    predictive: PredictiveConfig = field(default_factory=PredictiveConfig)
    goals: GoalConfig = field(default_factory=GoalConfig)
    synthesis: SynthesisConfig = field(default_factory=SynthesisConfig)
    cascade: CascadeConfig = field(default_factory=CascadeConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    privacy: PrivacyConfig = field(default_factory=PrivacyConfig)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UCMAConfig:
        """Build from ``{"group": {"field": value}}``; unknown names raise ConfigError."""
        groups: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            section = data.get(f.name)
            if section is None:
                continue
            if not isinstance(section, dict):
                raise ConfigError(f"config section {f.name!r} must be a mapping")
            group_cls = type(getattr(cls(), f.name))
            try:
                groups[f.name] = group_cls(**section)
            except TypeError as exc:
                raise ConfigError(f"config section {f.name!r}: {exc}") from exc
        unknown = set(data) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ConfigError(f"unknown config sections: {sorted(unknown)}")
        return cls(**groups)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
