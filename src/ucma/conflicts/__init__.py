"""Conflict resolution (seed 002): predicates, the decision tree, sources of truth.

- ``predicates``: which predicates hold one value at a time (only those conflict);
- ``resolution``: the pure decision tree;
- ``resolver``: applies decisions to storage atomically, flags dependents;
- ``sources``: ``SourceOfTruth`` and the SQL implementation;
- ``reports`` / ``answer``: what writes, reads and ``answer`` return.
"""

from ucma.conflicts.answer import Answer
from ucma.conflicts.predicates import PredicateRegistry
from ucma.conflicts.reports import FactAssertion, FactList
from ucma.conflicts.sources import SourceOfTruth, SQLSourceOfTruth

__all__ = [
    "Answer",
    "FactAssertion",
    "FactList",
    "PredicateRegistry",
    "SQLSourceOfTruth",
    "SourceOfTruth",
]
