"""Offline defaults for the provider protocols: rules and statistics, no model.

``RuleFactExtractor`` (``ucma.providers.rule_facts``) turns common English
statements into triples and claims of change.

``ExtractiveSummarizer`` keeps the most central sentences (sum of TF-IDF
cosine similarity to the other sentences, LexRank's degree centrality) within
a token budget, in their original order; sentences less than half as central
as the average are off-topic and never used to fill the budget.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

from ucma.memory.importance import classify_importance
from ucma.providers.rule_facts import RuleFactExtractor

__all__ = ["HeuristicImportance", "ExtractiveSummarizer", "RuleFactExtractor"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


class ExtractiveSummarizer:
    """The offline ``Summarizer``: central sentences within a token budget.

    ``count_tokens`` defaults to the packaged WordPiece tokenizer (the
    embedder's own), so budgets match what the embedder sees.
    """

    def __init__(self, count_tokens: Callable[[str], int] | None = None) -> None:
        self._count = count_tokens

    def _tokens(self, text: str) -> int:
        if self._count is None:
            from ucma.embeddings import TokenCounter

            self._count = TokenCounter().count
        return self._count(text)

    async def summarize(self, content: str, max_tokens: int = 150) -> str:
        return self.summary(content, max_tokens)

    def summary(self, content: str, max_tokens: int = 150) -> str:
        """Synchronous form of ``summarize``."""
        text = " ".join(content.split())
        if self._tokens(text) <= max_tokens:
            return text
        sentences = [s.strip() for s in _SENTENCE.split(content) if s.strip()]
        scores = _centrality(sentences)
        # Sentences far less central than average are off-topic: never used as filler.
        floor = 0.5 * sum(scores) / len(scores)
        order = sorted(
            (i for i in range(len(sentences)) if scores[i] >= floor),
            key=lambda i: (-scores[i], i),
        )
        chosen: list[int] = []
        used = 0
        for i in order:
            cost = self._tokens(sentences[i])
            if used + cost <= max_tokens:
                chosen.append(i)
                used += cost
        if not chosen:
            return self._truncate(sentences[order[0]], max_tokens)
        return " ".join(" ".join(sentences[i].split()) for i in sorted(chosen))

    def _truncate(self, sentence: str, max_tokens: int) -> str:
        words = sentence.split()
        low, high = 0, len(words)
        while low < high:  # the longest prefix of words within the budget
            mid = (low + high + 1) // 2
            if self._tokens(" ".join(words[:mid])) <= max_tokens:
                low = mid
            else:
                high = mid - 1
        return " ".join(words[:low])


_WORD = re.compile(r"[^\W_]+")


def _centrality(sentences: list[str]) -> list[float]:
    """Degree centrality of each sentence in the TF-IDF cosine-similarity graph."""
    bags = [Counter(w.lower() for w in _WORD.findall(s)) for s in sentences]
    df = Counter(word for bag in bags for word in bag)
    n = len(sentences)
    vectors = []
    for bag in bags:
        weights = {w: c * (math.log((1 + n) / (1 + df[w])) + 1.0) for w, c in bag.items()}
        norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
        vectors.append({w: v / norm for w, v in weights.items()})
    return [
        sum(
            sum(weight * other.get(word, 0.0) for word, weight in vector.items())
            for j, other in enumerate(vectors)
            if j != i
        )
        for i, vector in enumerate(vectors)
    ]


class HeuristicImportance:
    """The offline ``ImportanceClassifier``: seed 001's heuristic."""

    async def classify_importance(self, content: str, source: str) -> float:
        return classify_importance(content, source)
