"""Pure graph algorithms for the memory graph: weighted PageRank and best-first expansion.

Nothing here touches storage. PageRank works on integer-indexed edge arrays (the caller maps
memory ids to 0..n-1, or uses ``pagerank_by_id``); the best-first search pulls neighbours
through a callback, so the caller decides how edges are fetched.

PageRank (seed 001, chapter 16) on a directed weighted graph:

    r' = d * P r + (d * sum(r[dangling]) + 1 - d) / n

where ``P[t, s] = w(s -> t) / W(s)`` with ``W(s)`` the total outgoing weight of ``s``
(parallel edges are summed) and the dangling nodes are those with ``W(s) == 0``: no outgoing
edges, or only zero-weight ones. Their mass is spread uniformly at every iteration, so the
scores keep summing to 1 (the seed lost the mass of nodes whose outgoing weights were all 0).
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Callable, Collection, Iterable, Sequence

import numpy as np

from ucma.errors import ValidationError

__all__ = ["best_first_related", "pagerank", "pagerank_by_id"]

logger = logging.getLogger(__name__)


def _is_real(value: object) -> bool:
    """A Python or NumPy real number, not a bool."""
    return not isinstance(value, bool | np.bool_) and isinstance(value, int | float | np.number)


def _index_array(name: str, array: np.ndarray, n: int) -> np.ndarray:
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.dtype.kind in "ui":
        indices = array.astype(np.int64, copy=False)
    elif array.dtype.kind == "f" and np.all(np.isfinite(array) & (array == np.round(array))):
        indices = array.astype(np.int64)
    else:
        raise ValidationError(f"{name} must hold integer node indices, got dtype {array.dtype}")
    if indices.min() < 0 or indices.max() >= n:
        raise ValidationError(f"{name} holds an index outside 0..{n - 1}")
    return indices


def pagerank(
    n: int,
    sources: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    damping: float = 0.85,
    iterations: int = 20,
    tol: float | None = None,
) -> np.ndarray:
    """PageRank scores of nodes ``0..n-1``, a float64 array that sums to 1.

    Edge ``i`` goes from ``sources[i]`` to ``targets[i]`` with ``weights[i] >= 0``. Runs
    ``iterations`` power iterations from the uniform vector, or fewer if ``tol`` is given and
    the L1 change of one iteration falls below it. ``damping`` is in [0, 1] (seed 001 default
    0.85, 20 iterations). Raises ``ValidationError`` for arrays of different lengths, indices
    outside the node range, negative or non-finite weights, or bad parameters. ``n == 0``
    returns an empty array.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValidationError(f"n must be an int >= 0, got {n!r}")
    if not _is_real(damping) or not 0.0 <= damping <= 1.0:
        raise ValidationError(f"damping must be a number in [0, 1], got {damping!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValidationError(f"iterations must be an int >= 1, got {iterations!r}")
    if tol is not None and (not _is_real(tol) or not tol > 0.0):
        raise ValidationError(f"tol must be a positive number or None, got {tol!r}")
    source_array, target_array = np.asarray(sources), np.asarray(targets)
    try:
        weight_array = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"weights must be numbers: {exc}") from exc
    for name, array in (
        ("sources", source_array),
        ("targets", target_array),
        ("weights", weight_array),
    ):
        if array.ndim != 1:
            raise ValidationError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not source_array.size == target_array.size == weight_array.size:
        raise ValidationError("sources, targets and weights must have the same length")
    if weight_array.size and (not np.all(np.isfinite(weight_array)) or weight_array.min() < 0):
        raise ValidationError("weights must be finite and >= 0")
    n = int(n)
    if n == 0:
        if weight_array.size:
            raise ValidationError("edges were given for a graph with n == 0 nodes")
        return np.zeros(0, dtype=np.float64)
    source_index = _index_array("sources", source_array, n)
    target_index = _index_array("targets", target_array, n)

    out_weight = np.bincount(source_index, weights=weight_array, minlength=n)
    dangling = out_weight <= 0.0
    keep = weight_array > 0.0
    import scipy.sparse as sp  # imported on first use: `import ucma` stays fast

    transition = sp.csr_matrix(
        (
            weight_array[keep] / out_weight[source_index[keep]],
            (target_index[keep], source_index[keep]),
        ),
        shape=(n, n),
        dtype=np.float64,
    )
    transition.sum_duplicates()

    scores = np.full(n, 1.0 / n)
    teleport = (1.0 - damping) / n
    for iteration in range(iterations):
        updated = damping * (transition @ scores)
        updated += teleport + damping * scores[dangling].sum() / n
        updated /= updated.sum()
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if tol is not None and change < tol:
            logger.debug("pagerank converged after %d iterations (n=%d)", iteration + 1, n)
            break
    return scores


def pagerank_by_id(
    node_ids: Sequence[str],
    edges: Iterable[tuple[str, str, float]],
    damping: float = 0.85,
    iterations: int = 20,
    tol: float | None = None,
) -> dict[str, float]:
    """``pagerank`` keyed by id: ``edges`` are ``(source_id, target_id, weight)``.

    Every edge endpoint must be in ``node_ids`` (``ValidationError`` otherwise); duplicate
    ids in ``node_ids`` are rejected too.
    """
    position = {node_id: index for index, node_id in enumerate(node_ids)}
    if len(position) != len(node_ids):
        raise ValidationError("node_ids must be unique")
    sources: list[int] = []
    targets: list[int] = []
    weights: list[float] = []
    for source_id, target_id, weight in edges:
        try:
            sources.append(position[source_id])
            targets.append(position[target_id])
        except KeyError as exc:
            raise ValidationError(f"edge endpoint {exc.args[0]!r} is not in node_ids") from exc
        weights.append(weight)
    scores = pagerank(
        len(position),
        np.asarray(sources, dtype=np.int64),
        np.asarray(targets, dtype=np.int64),
        np.asarray(weights, dtype=np.float64),
        damping=damping,
        iterations=iterations,
        tol=tol,
    )
    return {node_id: float(scores[index]) for node_id, index in position.items()}


def best_first_related(
    start: str,
    neighbors: Callable[[str], Iterable[tuple[str, str, float]]],
    max_hops: int,
    edge_types: Collection[str] | None = None,
    min_weight: float = 0.0,
) -> list[tuple[str, float, int]]:
    """Nodes reachable from ``start`` within ``max_hops``, strongest connection first.

    ``neighbors(node_id)`` yields the outgoing edges ``(target_id, edge_type, weight)``. A
    path's strength is the product of its edge weights; each node is reported once, as
    ``(node_id, best_strength, hops_of_that_path)``, sorted by strength descending, then hops
    ascending, then id. ``start`` itself is never reported, nor is a node whose best strength
    is 0.

    Filters (seed 001): ``edge_types`` keeps only those types (None keeps all; an empty
    collection is rejected, pass None instead); ``min_weight`` drops single edges lighter than
    it (it does not bound the product).

    Weights must lie in [0, 1]: best-first order relies on a path never growing stronger as it
    extends, so a weight outside the range raises ``ValidationError``. Unlike the seed, a
    stronger but longer path to a node does not hide a weaker, shorter one when only the
    shorter one leaves enough hops to reach further nodes.
    """
    if isinstance(max_hops, bool) or not isinstance(max_hops, int) or max_hops < 0:
        raise ValidationError(f"max_hops must be an int >= 0, got {max_hops!r}")
    if not _is_real(min_weight) or math.isnan(min_weight):
        raise ValidationError(f"min_weight must be a number, got {min_weight!r}")
    allowed: frozenset[str] | None = None
    if edge_types is not None:
        if isinstance(edge_types, str):
            raise ValidationError("edge_types must be a collection of type names, not a str")
        allowed = frozenset(edge_types)
        if not allowed:
            raise ValidationError("edge_types is empty; pass None to follow every edge type")

    # fewest hops with which each node has been expanded; a later pop never has more
    # strength, so it is useful only if it arrives with fewer hops
    settled_hops: dict[str, int] = {start: 0}
    best: dict[str, tuple[float, int]] = {}
    heap: list[tuple[float, int, str]] = [(-1.0, 0, start)]
    while heap:
        negative_strength, hops, node_id = heapq.heappop(heap)
        strength = -negative_strength
        if node_id != start:
            previous = settled_hops.get(node_id)
            if previous is not None and previous <= hops:
                continue
            settled_hops[node_id] = hops
            best.setdefault(node_id, (strength, hops))
        if hops == max_hops:
            continue
        for target_id, edge_type, weight in neighbors(node_id):
            if not _is_real(weight) or not 0.0 <= weight <= 1.0:
                raise ValidationError(
                    f"edge {node_id!r} -> {target_id!r} has weight {weight!r}; "
                    "best_first_related needs weights in [0, 1]"
                )
            if allowed is not None and edge_type not in allowed:
                continue
            if weight < min_weight:
                continue
            extended = strength * weight
            if extended <= 0.0:
                continue
            known = settled_hops.get(target_id)
            if known is not None and known <= hops + 1:
                continue
            heapq.heappush(heap, (-extended, hops + 1, target_id))

    related = [(node_id, strength, hops) for node_id, (strength, hops) in best.items()]
    related.sort(key=lambda entry: (-entry[1], entry[2], entry[0]))
    return related
