"""Fusion, ranking presets, confidence, routing and the cascade as pure functions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ucma.config import CascadeConfig, RetrievalConfig
from ucma.errors import ConfigError
from ucma.retrieval.cascade import PRECEDENCE, CascadePath, cascade, layer_confidence, merge
from ucma.retrieval.confidence import Confidence, confidence
from ucma.retrieval.fusion import normalise, rrf, score_fusion, weighed_by_meaning
from ucma.retrieval.name_free import blend
from ucma.retrieval.ranking import (
    RANKING_PRESETS,
    RankInputs,
    rank_score,
    reads_retention,
    recency,
)
from ucma.retrieval.router import (
    PRIMARY_LAYER,
    Layer,
    QueryClass,
    classify,
    named_entities,
    route,
    without_names,
)
from ucma.types import Episode, Hit, Provenance

DAY = 86_400.0


def test_rrf_matches_the_formula_and_weights():
    fused = rrf({"a": {"x": 0.9, "y": 0.5}, "b": {"y": 3.0}}, {"a": 1.0, "b": 2.0}, k=60)
    assert fused["x"] == pytest.approx(1 / 61)
    assert fused["y"] == pytest.approx(1 / 62 + 2 / 61)
    assert rrf({"a": {"x": 1.0}}, {"a": 0.0}) == {}


def test_score_fusion_normalises_each_channel():
    channels = {"dense": {f"d{i}": i / 10 for i in range(6)}, "keyword": {"d5": 12.0, "k": 3.0}}
    fused = score_fusion(channels, {"dense": 0.5, "keyword": 0.5})
    assert fused["d5"] == pytest.approx(1.0)  # best in both
    assert fused["d0"] == pytest.approx(0.0)  # worst of six: minmax zero
    assert fused["k"] == pytest.approx(0.5 * 3.0 / 12.0)  # two candidates: max normalisation
    raw = score_fusion(channels, {"dense": 1.0}, methods={"dense": "none"})
    assert raw["d3"] == pytest.approx(0.3)


def test_keyword_matches_count_by_how_related_the_memory_is():
    keyword = {"reply": 0.34, "statement": 0.14, "half": 0.4, "unknown": 0.5}
    cosines = {"reply": 0.16, "statement": 0.52, "half": 0.2}
    weighed = weighed_by_meaning(keyword, cosines, 0.1, 0.3)
    assert weighed["reply"] == pytest.approx(0.34 * 0.3)  # a long reply, barely related
    assert weighed["statement"] == pytest.approx(0.14)  # related: the match counts whole
    assert weighed["half"] == pytest.approx(0.2)
    assert weighed["unknown"] == 0.0  # no cosine: unrelated
    with pytest.raises(ValueError):
        weighed_by_meaning(keyword, cosines, 0.3, 0.3)


def test_keyword_cosine_ramp_is_validated_and_read_from_lists():
    assert RetrievalConfig(keyword_cosine_ramp=[0.0, 0.4]).keyword_cosine_ramp == (0.0, 0.4)  # type: ignore[arg-type]
    assert RetrievalConfig(keyword_cosine_ramp=None).keyword_cosine_ramp is None
    for bad in ((0.3, 0.1), (0.1,), (-2.0, 0.5), ("a", "b")):
        with pytest.raises(ConfigError):
            RetrievalConfig(keyword_cosine_ramp=bad)  # type: ignore[arg-type]


@given(
    st.dictionaries(st.text(min_size=1, max_size=3), st.floats(-5, 50), max_size=20),
    st.sampled_from(["max", "minmax", "none"]),
)
def test_normalised_scores_stay_in_the_unit_interval(scores, method):
    for value in normalise(scores, method).values():
        assert 0.0 <= value <= 1.0


def test_ranking_presets():
    cfg = RetrievalConfig()
    x = RankInputs(relevance=0.8, salience=0.5, age_days=7.0, retention=0.9, confidence=0.6)
    assert rank_score("relevance", x, cfg) == 0.8
    assert rank_score("seed003", x, cfg) == pytest.approx(0.4)
    # The heuristic base salience does not order hits by default (weight 0) ...
    assert rank_score("salient", x, cfg) == pytest.approx(0.8)
    # ... and tempers the fused score with the weight it is given.
    tempered = RetrievalConfig(salience_weight=0.2)
    assert rank_score("salient", x, tempered) == pytest.approx(0.8 * (0.8 + 0.2 * 0.5))
    assert rank_score("seed001", x, cfg) == pytest.approx(
        0.4 * 0.8 + 0.25 * 0.5 + 0.2 * 0.5 + 0.15 * 0.9
    )
    assert rank_score("seed004", x, cfg) == pytest.approx(0.5 * 0.6 + 0.3 * 1.0 + 0.2 * 0.5)
    assert set(RANKING_PRESETS) == {"relevance", "salient", "seed001", "seed003", "seed004"}
    assert recency(None, 7) == 0.5 and recency(-1, 7) == 1.0


@pytest.mark.parametrize("preset", sorted(RANKING_PRESETS))
def test_ranking_reads_retention_only_for_the_presets_that_score_it(preset):
    """Ranking skips reading retention states for a preset that says it does not
    use them: its score must then be the same whatever the retention."""
    cfg = RetrievalConfig()
    scores = {
        rank_score(
            preset,
            RankInputs(relevance=0.8, salience=0.5, age_days=7.0, retention=kept, confidence=0.6),
            cfg,
        )
        for kept in (None, 0.0, 0.9)
    }
    assert (len(scores) > 1) == reads_retention(preset)


def _episode(i: int, timestamp: float = 0.0, **kw) -> Episode:
    return Episode(
        id=f"ep{i}",
        user_id="u",
        content=f"text {i}",
        created_at=timestamp,
        session_id="s",
        timestamp=timestamp,
        **kw,
    )


def test_five_factor_confidence_uses_the_seed_weights():
    cfg = CascadeConfig()
    now = 100 * DAY
    ep = _episode(1, now - 3 * DAY, source="user", participants=["user"], metadata={"k": 1})
    conf = confidence(ep, cosine=0.56, layer="episodic", reference_time=now, config=cfg)
    # Relevance: cosine 0.20 -> 0 ... 0.65 -> 1, so 0.56 -> 0.8; no keyword match.
    assert conf.semantic_relevance == pytest.approx(0.8)
    assert conf.source_quality == pytest.approx(0.85)
    assert conf.recency == pytest.approx(0.92, abs=0.01)  # seed 004: three days -> 0.92
    assert conf.consistency == 1.0
    expected = (
        0.35 * 0.8 + 0.25 * 0.85 + 0.15 * conf.recency + 0.15 * 1.0 + 0.10 * conf.completeness
    )
    assert conf.overall == pytest.approx(expected) and conf.level == "high"
    doubtful = confidence(
        ep, cosine=0.45, layer="episodic", reference_time=now, config=cfg, in_doubt=True
    )
    assert doubtful.consistency == 0.5 and doubtful.overall < conf.overall
    generated = _episode(2, now, provenance=Provenance.GENERATED)
    assert confidence(
        generated, cosine=0.4, layer="episodic", reference_time=now, config=cfg
    ).source_quality == pytest.approx(0.85 * 0.6)


def test_recency_follows_the_temporal_level():
    """A lasting attribute said months ago is as current as its level says: months
    for a seasonal one (3), years for an identity (4); an event fades in weeks."""
    cfg = CascadeConfig()
    now = 400 * DAY
    said = now - 100 * DAY

    def recency(level: int) -> float:
        ep = _episode(level, said, source="user", temporal_level=level)
        return confidence(ep, cosine=0.5, layer="episodic", reference_time=now, config=cfg).recency

    assert recency(1) == pytest.approx(math.exp(-100 / 36))
    assert recency(2) == recency(1)
    assert recency(3) == pytest.approx(math.exp(-100 / 365))
    assert recency(4) == pytest.approx(math.exp(-100 / 3650))


def test_relevance_gates_confidence_whatever_the_age_and_source():
    cfg = CascadeConfig()
    now = 100 * DAY
    fresh = _episode(1, now, source="user", participants=["user"], metadata={"k": 1})
    unrelated = confidence(fresh, cosine=0.12, layer="episodic", reference_time=now, config=cfg)
    assert unrelated.semantic_relevance == 0.0 and unrelated.overall == 0.0
    assert unrelated.level == "low"
    low, full = cfg.relevance_floor_cosine, cfg.relevance_full_cosine

    def cosine_for(relevance: float) -> float:
        return low + relevance * (full - low)

    # Half the gate's relevance: half the seed's weighted sum.
    half = cfg.relevance_gate / 2
    weak = confidence(
        fresh, cosine=cosine_for(half), layer="episodic", reference_time=now, config=cfg
    )
    assert weak.semantic_relevance == pytest.approx(half)
    plain = (
        0.35 * half
        + 0.25 * weak.source_quality
        + 0.15 * weak.recency
        + 0.15
        + 0.10 * weak.completeness
    )
    assert weak.overall == pytest.approx(plain * 0.5) and weak.level == "low"
    # A keyword match alone counts (noisy OR with the dense part).
    worded = confidence(
        fresh, cosine=0.2, keyword=0.6, layer="episodic", reference_time=now, config=cfg
    )
    assert worded.semantic_relevance == pytest.approx(0.6)
    both = confidence(
        fresh, cosine=cosine_for(0.5), keyword=0.6, layer="episodic", reference_time=now, config=cfg
    )
    assert both.semantic_relevance == pytest.approx(1 - 0.5 * 0.4)
    # Not about the person asked about: a share of the relevance.
    other = confidence(
        fresh,
        cosine=cosine_for(0.5),
        keyword=0.6,
        layer="episodic",
        reference_time=now,
        config=cfg,
        off_subject=True,
    )
    assert other.semantic_relevance == pytest.approx(0.8 * cfg.off_subject_factor)
    passing = confidence(
        fresh,
        cosine=cosine_for(0.5),
        keyword=0.6,
        layer="episodic",
        reference_time=now,
        config=cfg,
        passing=True,
    )
    assert passing.semantic_relevance == pytest.approx(0.8 * cfg.passing_line_factor)
    ungated = CascadeConfig(relevance_gate=0.0)
    seed = confidence(fresh, cosine=0.12, layer="episodic", reference_time=now, config=ungated)
    assert seed.overall > 0.5  # the seed's plain sum: confident about nothing


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("When did Caroline go to the support group?", QueryClass.TEMPORAL),
        ("What did we discuss last week?", QueryClass.TEMPORAL),
        ("How is Alice related to the Billing API?", QueryClass.RELATIONAL),
        ("Should I migrate the database before the release?", QueryClass.PLANNING),
        ("How do I rotate the JWT signing keys?", QueryClass.PROCEDURAL),
        ("Remind me what is due tomorrow", QueryClass.PROSPECTIVE),
        ("What do you know about me?", QueryClass.META),
        ("What is Michael's favourite framework?", QueryClass.FACTUAL),
    ],
)
def test_router_classes(query, expected):
    assert classify(query) is expected


def test_every_class_has_a_primary_layer_and_a_precedence():
    assert set(PRIMARY_LAYER) == set(QueryClass)
    assert set(PRECEDENCE) == set(Layer)
    assert PRECEDENCE[Layer.SEMANTIC] == (Layer.EPISODIC, Layer.GRAPH, Layer.PROCEDURAL)
    assert PRECEDENCE[Layer.EPISODIC] == (Layer.SEMANTIC, Layer.GRAPH)


def test_named_entities_are_whole_words_longest_first():
    known = ["Mary", "Mary Ann", "Al"]
    assert named_entities("Did Mary Ann's sister call?", known) == ["Mary Ann"]
    assert named_entities("Ask ALICE and mary", known) == ["Mary"]  # "Al" is not a word here


def _hit(i: int, overall: float, recency_: float = 0.5) -> Hit:
    conf = Confidence(0.5, 0.8, recency_, 1.0, 0.6, overall)
    return Hit(
        memory=_episode(i), score=overall, relevance=overall, source="dense", confidence=conf
    )


def test_names_leave_the_keyword_terms_and_the_embedded_text():
    assert without_names("When did Mel's sister visit Mary Ann?", ["Mary Ann", "Mel"]) == (
        "When did sister visit?"
    )
    assert without_names("Caroline?", ["Caroline"]) == ""
    plan = route("What did Caroline research?", reference_time=0.0, known_entities=["Caroline"])
    assert plan.entities == ["Caroline"] and plan.terms == ["research"]
    assert plan.embedded_text == "What did research?"
    alone = route("Caroline", reference_time=0.0, known_entities=["Caroline"])
    assert alone.embedded_text == "Caroline" and alone.terms == ["caroline"]
    kept = route(
        "What did Caroline research?",
        reference_time=0.0,
        known_entities=["Caroline"],
        drop_entity_terms=False,
    )
    assert kept.embedded_text == "What did Caroline research?"


def test_only_a_range_the_caller_gives_filters():
    parsed = route("What happened yesterday?", reference_time=86_400.0 * 10)
    assert parsed.time_range is not None and not parsed.time_filter
    given_range = route("support group", reference_time=0.0, time_range=(0.0, 1.0))
    assert given_range.time_filter


def test_merge_weighs_scores_by_layer_and_keeps_each_memory_once():
    primary = [_hit(1, 0.40), _hit(2, 0.30)]
    secondary = [_hit(2, 0.90), _hit(3, 0.60, recency_=1.0), _hit(4, 0.70)]
    merged = merge([(1.0, primary), (0.5, secondary)], k=3)
    scores = {h.id: h.score for h in merged}
    # ep2 at its best (0.45 from the secondary layer beats 0.30); ep1 keeps 0.40;
    # ep4 (0.35) enters above ep3 (0.30), which is cut.
    assert [h.id for h in merged] == ["ep2", "ep1", "ep4"]
    assert scores["ep2"] == pytest.approx(0.5 * 0.90)
    assert scores["ep1"] == pytest.approx(0.40)
    # Merging the same pools again (the cascade's next depth) weighs them once.
    again = merge([(1.0, primary), (0.5, secondary)], k=3)
    assert [h.score for h in again] == [h.score for h in merged]
    assert [h.score for h in secondary] == [0.90, 0.60, 0.70]
    # The primary's own order survives a merge with nothing better.
    assert [h.id for h in merge([(1.0, primary), (0.7, [_hit(5, 0.2)])], k=3)] == [
        "ep1",
        "ep2",
        "ep5",
    ]


def _search_with(confidences: dict[Layer, float]):
    calls: list[tuple[Layer, int]] = []
    deep: list[bool] = []

    def search(layer: Layer, k: int, looks_deeper: bool) -> list[Hit]:
        calls.append((layer, k))
        deep.append(looks_deeper)
        return [_hit(len(calls) * 10 + j, confidences.get(layer, 0.1)) for j in range(k)]

    search.deep = deep  # type: ignore[attr-defined]
    return search, calls


def test_a_layers_confidence_is_its_first_results_or_a_lower_ones_discounted():
    hits = [_hit(1, 0.3), _hit(2, 0.9)]
    # Seed 004 reads results[layer][0]: a surer line further down does not vouch
    # for the answer ranked first, or only discounted by its rank.
    assert layer_confidence(hits, 0.0) == pytest.approx(0.3)
    assert layer_confidence(hits, 0.9) == pytest.approx(0.81)
    assert layer_confidence(hits, 1.0) == pytest.approx(0.9)
    assert layer_confidence([], 0.9) == 0.0
    with pytest.raises(ConfigError):
        CascadeConfig(confidence_rank_discount=1.5)


def test_no_cascade_on_high_confidence():
    search, calls = _search_with({Layer.SEMANTIC: 0.8})
    hits, path = cascade(
        search, Layer.SEMANTIC, 5, enabled=True, threshold=0.5, max_depth=2, config=CascadeConfig()
    )
    assert calls == [(Layer.SEMANTIC, 5)] and len(hits) == 5
    assert path.cascaded_to == [] and path.final_confidence == pytest.approx(0.8)


def test_cascade_on_low_confidence_follows_precedence_with_overfetch_and_depth_limit():
    search, calls = _search_with({Layer.SEMANTIC: 0.2, Layer.EPISODIC: 0.3, Layer.GRAPH: 0.35})
    hits, path = cascade(
        search, Layer.SEMANTIC, 4, enabled=True, threshold=0.5, max_depth=2, config=CascadeConfig()
    )
    assert calls == [(Layer.SEMANTIC, 4), (Layer.EPISODIC, 12), (Layer.GRAPH, 12)]
    assert search.deep == [False, True, True]  # secondary layers look further
    assert path.cascaded_to == ["episodic", "graph"] and path.depth == 2
    # The seed's 0.7 primary + 0.3 mean(secondary), unless the merged first result
    # is surer.
    seed = 0.7 * 0.2 + 0.3 * (0.3 + 0.35) / 2
    first = hits[0].confidence.overall
    assert path.final_confidence == pytest.approx(max(seed, first)) and first == 0.3
    assert len(hits) == 4 and path.merge_strategy == "confidence_weighted"
    _, shallow = cascade(
        _search_with({})[0],
        Layer.EPISODIC,
        4,
        enabled=True,
        threshold=0.9,
        max_depth=1,
        config=CascadeConfig(),
    )
    assert shallow.cascaded_to == ["semantic"]


def test_cascade_stops_once_confident_and_can_be_disabled():
    search, calls = _search_with({Layer.PROCEDURAL: 0.45, Layer.EPISODIC: 0.9})
    _, path = cascade(
        search,
        Layer.PROCEDURAL,
        3,
        enabled=True,
        threshold=0.5,
        max_depth=2,
        config=CascadeConfig(),
    )
    assert path.cascaded_to == ["episodic"]  # 0.7 * 0.45 + 0.3 * 0.9 = 0.585: enough
    search, calls = _search_with({Layer.PROCEDURAL: 0.2})
    _, off = cascade(
        search,
        Layer.PROCEDURAL,
        3,
        enabled=False,
        threshold=0.5,
        max_depth=2,
        config=CascadeConfig(),
    )
    assert off.cascaded_to == [] and isinstance(off, CascadePath) and len(calls) == 1


def test_a_shared_name_raises_the_bar_for_relevance():
    cfg = CascadeConfig()
    memory = _episode(1, 0.0, source="user", participants=["user"], metadata={"k": 1})
    # Relevance 0.7 on the plain scale; the shared name's shift moves both ends up.
    cosine = cfg.relevance_floor_cosine + 0.7 * (
        cfg.relevance_full_cosine - cfg.relevance_floor_cosine
    )
    plain = confidence(memory, cosine=cosine, layer="episodic", reference_time=0.0, config=cfg)
    shared = confidence(
        memory,
        cosine=cosine,
        layer="episodic",
        reference_time=0.0,
        config=cfg,
        cosine_shift=cfg.shared_name_cosine_shift,
    )
    assert plain.semantic_relevance == pytest.approx(0.7)
    assert shared.semantic_relevance == pytest.approx(
        0.7
        - cfg.shared_name_cosine_shift / (cfg.relevance_full_cosine - cfg.relevance_floor_cosine)
    )
    assert shared.overall < plain.overall - 0.1


def test_the_query_words_that_say_what_is_asked():
    plan = route("What is my landlord Bruno's middle name?", reference_time=0.0)
    assert plan.names == ("Bruno",)
    assert plan.answer_terms == ["middle", "name"]
    # The relation that introduces a person is not what the query asks about.
    assert "landlord" not in plan.terms and "middle" in plan.terms
    assert route("which theme does Alice like?", reference_time=0.0).names == ("Alice",)


def test_names_no_participant_goes_by_are_left_for_the_keyword_index_to_judge():
    plan = route(
        "Did Bruno and Kofi Mensah meet on Fridays in March?",
        reference_time=0.0,
        known_entities=["Bruno"],
    )
    # Bruno is a known participant; weekdays and months are time, not a subject.
    assert plan.unknown_names == ("Kofi Mensah",)
    assert route("When is Kofi's pottery?", reference_time=0.0).unknown_names == ("Kofi",)


def test_a_name_free_cosine_is_mixed_in_by_its_weight():
    assert blend(0.6, None, 0.5) == 0.6
    assert blend(0.6, 0.2, 0.5) == pytest.approx(0.4)
    assert blend(0.6, 0.2, 0.0) == pytest.approx(0.6)
    for bad in (
        {"name_free_weight": 1.5},
        {"name_free_weight": -0.1},
        {"name_free_candidates": 0},
    ):
        with pytest.raises(ConfigError):
            RetrievalConfig(**bad)
