"""PageRank and best-first expansion against independent references."""

import importlib.util

import numpy as np
import pytest

from ucma.errors import ValidationError
from ucma.memory.graph_maths import best_first_related, pagerank, pagerank_by_id


def dense_reference(n, edges, damping=0.85, iterations=200):
    """Textbook PageRank by dense power iteration, written independently of the library.

    The Google matrix is built explicitly: a column per source node, either its normalised
    out-weights or, for a node without outgoing weight, the uniform column.
    """
    adjacency = np.zeros((n, n))
    for source, target, weight in edges:
        adjacency[target, source] += weight
    column_sums = adjacency.sum(axis=0)
    stochastic = np.empty((n, n))
    for column in range(n):
        if column_sums[column] > 0:
            stochastic[:, column] = adjacency[:, column] / column_sums[column]
        else:
            stochastic[:, column] = 1.0 / n
    google = damping * stochastic + (1.0 - damping) / n * np.ones((n, n))
    scores = np.full(n, 1.0 / n)
    for _ in range(iterations):
        scores = google @ scores
    return scores


def run(n, edges, **kwargs):
    sources = np.array([edge[0] for edge in edges], dtype=np.int64)
    targets = np.array([edge[1] for edge in edges], dtype=np.int64)
    weights = np.array([edge[2] for edge in edges], dtype=np.float64)
    return pagerank(n, sources, targets, weights, **kwargs)


SMALL_GRAPH = [(0, 1, 1.0), (0, 2, 3.0), (1, 2, 1.0), (2, 0, 1.0), (3, 2, 0.5), (3, 0, 0.5)]
DANGLING_GRAPH = [(0, 1, 1.0), (1, 2, 2.0), (0, 2, 1.0), (3, 1, 1.0)]  # node 2 and 4 dangle


def test_symmetric_cycle_is_uniform() -> None:
    scores = run(4, [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (3, 0, 1.0)])
    np.testing.assert_allclose(scores, np.full(4, 0.25), atol=1e-12)


def test_small_graph_matches_dense_power_iteration() -> None:
    scores = run(4, SMALL_GRAPH, iterations=200)
    np.testing.assert_allclose(scores, dense_reference(4, SMALL_GRAPH), atol=1e-12)
    assert scores.sum() == pytest.approx(1.0, abs=1e-12)
    assert scores[2] > scores[0] > scores[1] > scores[3]


def test_dangling_nodes_redistribute_their_mass() -> None:
    scores = run(5, DANGLING_GRAPH, iterations=200)
    np.testing.assert_allclose(scores, dense_reference(5, DANGLING_GRAPH), atol=1e-12)
    assert scores.sum() == pytest.approx(1.0, abs=1e-12)
    # the isolated node 4 receives only teleport and dangling mass, like node 3
    assert scores[4] == pytest.approx(scores[3])


def test_default_twenty_iterations_match_the_reference_at_twenty() -> None:
    scores = run(5, DANGLING_GRAPH)
    np.testing.assert_allclose(
        scores, dense_reference(5, DANGLING_GRAPH, iterations=20), atol=1e-12
    )


def test_zero_weight_out_edges_make_a_node_dangling() -> None:
    with_zero = run(3, [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 0.0)], iterations=100)
    without = run(3, [(0, 1, 1.0), (1, 2, 1.0)], iterations=100)
    np.testing.assert_allclose(with_zero, without, atol=1e-12)
    assert with_zero.sum() == pytest.approx(1.0)


def test_parallel_edges_are_summed() -> None:
    split = run(3, [(0, 1, 0.5), (0, 1, 0.5), (0, 2, 1.0), (1, 0, 1.0), (2, 0, 1.0)])
    merged = run(3, [(0, 1, 1.0), (0, 2, 1.0), (1, 0, 1.0), (2, 0, 1.0)])
    np.testing.assert_allclose(split, merged, atol=1e-12)


def test_tolerance_stops_early_and_stays_close() -> None:
    early = run(4, SMALL_GRAPH, iterations=1000, tol=1e-10)
    np.testing.assert_allclose(early, dense_reference(4, SMALL_GRAPH), atol=1e-9)


def test_edge_cases() -> None:
    assert run(0, []).shape == (0,)
    np.testing.assert_allclose(run(3, []), np.full(3, 1 / 3))
    np.testing.assert_allclose(run(2, [(0, 1, 1.0)], damping=0.0), [0.5, 0.5])


def test_invalid_inputs_raise_validation_error() -> None:
    one = np.array([0])
    cases = [
        dict(n=2, sources=np.array([0, 1]), targets=one, weights=np.array([1.0])),
        dict(n=2, sources=np.array([2]), targets=one, weights=np.array([1.0])),
        dict(n=2, sources=np.array([-1]), targets=one, weights=np.array([1.0])),
        dict(n=2, sources=one, targets=one, weights=np.array([-1.0])),
        dict(n=2, sources=one, targets=one, weights=np.array([np.nan])),
        dict(n=2, sources=np.array([0.5]), targets=one, weights=np.array([1.0])),
        dict(n=-1, sources=one, targets=one, weights=np.array([1.0])),
        dict(n=0, sources=one, targets=one, weights=np.array([1.0])),
        dict(n=2, sources=np.array([[0]]), targets=one, weights=np.array([1.0])),
    ]
    for case in cases:
        with pytest.raises(ValidationError):
            pagerank(**case)
    for bad in (dict(damping=1.5), dict(iterations=0), dict(tol=0.0), dict(tol=-1.0)):
        with pytest.raises(ValidationError):
            pagerank(2, one, one, np.array([1.0]), **bad)


def test_pagerank_by_id() -> None:
    ids = ["a", "b", "c", "d"]
    edges = [(ids[s], ids[t], w) for s, t, w in SMALL_GRAPH]
    scores = pagerank_by_id(ids, edges, iterations=200)
    reference = dense_reference(4, SMALL_GRAPH)
    assert scores == pytest.approx(dict(zip(ids, reference, strict=True)), abs=1e-12)
    with pytest.raises(ValidationError):
        pagerank_by_id(["a"], [("a", "zz", 1.0)])
    with pytest.raises(ValidationError):
        pagerank_by_id(["a", "a"], [])
    assert pagerank_by_id([], []) == {}


@pytest.mark.skipif(importlib.util.find_spec("networkx") is None, reason="networkx absent")
def test_matches_networkx_when_installed() -> None:
    import networkx as nx

    graph = nx.MultiDiGraph()
    graph.add_nodes_from(range(5))
    graph.add_weighted_edges_from(DANGLING_GRAPH)
    expected = nx.pagerank(graph, alpha=0.85, tol=1e-14, max_iter=1000)
    scores = run(5, DANGLING_GRAPH, iterations=1000, tol=1e-14)
    np.testing.assert_allclose(scores, [expected[node] for node in range(5)], atol=1e-10)


# best-first expansion ---------------------------------------------------------------------

GRAPH = {
    "start": [("A", "supports", 0.9), ("B", "similar_to", 0.5)],
    "A": [("C", "caused_by", 0.5), ("D", "part_of", 0.8), ("start", "supports", 1.0)],
    "B": [("C", "supports", 1.0)],
    "C": [("E", "supports", 1.0)],
}


def neighbors_of(graph):
    calls: list[str] = []

    def neighbors(node_id):
        calls.append(node_id)
        return graph.get(node_id, [])

    return neighbors, calls


def test_weights_multiply_and_the_best_path_wins() -> None:
    neighbors, _ = neighbors_of(GRAPH)
    related = best_first_related("start", neighbors, max_hops=2)
    assert [(node, hops) for node, _, hops in related] == [("A", 1), ("D", 2), ("B", 1), ("C", 2)]
    weights = {node: weight for node, weight, _ in related}
    assert weights == pytest.approx({"A": 0.9, "D": 0.72, "B": 0.5, "C": 0.5})


def test_max_hops() -> None:
    neighbors, _ = neighbors_of(GRAPH)
    assert best_first_related("start", neighbors, max_hops=0) == []
    assert [node for node, _, _ in best_first_related("start", neighbors, max_hops=1)] == [
        "A",
        "B",
    ]
    three = best_first_related("start", neighbors, max_hops=3)
    assert ("E", pytest.approx(0.5), 3) in three
    assert "start" not in {node for node, _, _ in three}


def test_edge_type_filter_and_min_weight() -> None:
    neighbors, _ = neighbors_of(GRAPH)
    supports = best_first_related("start", neighbors, max_hops=3, edge_types={"supports"})
    assert supports == [("A", pytest.approx(0.9), 1)]
    heavy = best_first_related("start", neighbors, max_hops=3, min_weight=0.6)
    assert [(node, hops) for node, _, hops in heavy] == [("A", 1), ("D", 2)]
    with pytest.raises(ValidationError):
        best_first_related("start", neighbors, max_hops=2, edge_types=[])
    with pytest.raises(ValidationError):
        best_first_related("start", neighbors, max_hops=2, edge_types="supports")


def test_a_weaker_shorter_path_still_reaches_further() -> None:
    graph = {
        "start": [("X", "r", 1.0), ("Y", "r", 0.5)],
        "X": [("Y", "r", 0.9)],
        "Y": [("Z", "r", 1.0)],
    }
    neighbors, _ = neighbors_of(graph)
    related = best_first_related("start", neighbors, max_hops=2)
    assert related == [
        ("X", pytest.approx(1.0), 1),
        ("Y", pytest.approx(0.9), 2),
        ("Z", pytest.approx(0.5), 2),
    ]


def test_ties_are_deterministic_and_zero_paths_dropped() -> None:
    graph = {"s": [("b", "r", 0.5), ("a", "r", 0.5), ("c", "r", 0.0)], "a": [("d", "r", 1.0)]}
    neighbors, _ = neighbors_of(graph)
    assert best_first_related("s", neighbors, max_hops=2) == [
        ("a", 0.5, 1),
        ("b", 0.5, 1),
        ("d", 0.5, 2),
    ]


def test_unknown_start_and_bad_weights() -> None:
    neighbors, calls = neighbors_of(GRAPH)
    assert best_first_related("nowhere", neighbors, max_hops=2) == []
    assert calls == ["nowhere"]
    bad, _ = neighbors_of({"s": [("t", "r", 1.5)]})
    with pytest.raises(ValidationError):
        best_first_related("s", bad, max_hops=1)
    with pytest.raises(ValidationError):
        best_first_related("s", bad, max_hops=-1)
