"""Offline defaults for the provider protocols: rules and statistics, no model.

``RuleFactExtractor`` turns common English statements into triples:

    "My X is Y"                 -> (speaker, X, Y)           confidence 0.8
    "I prefer / like / love Y"  -> (speaker, prefers ..., Y)  confidence 0.8
    "X works at / for Y"        -> (X, works_at, Y)
    "X lives in Y"              -> (X, lives_in, Y)
    "X is building / using Y"   -> (X, building, Y)          (any "is <verb>ing")
    "X is set to Y", "X wants to Y", "X uses / needs / ... Y"
    "X is (a) Y"                -> (X, is, Y)
    dated events: "On 3 May 2024 X moved to Y" -> (X, moved_to, Y), valid_from the date

Subjects are proper names or "the/our ..." noun phrases; "I"/"my" mean the
speaker ("user" for the generic sources), and "he/she/they" the last name
mentioned in the same text. An object "A with B" also yields (A, uses, B).
Rule facts are ``inferred``, confidence 0.6 unless stated above.

``ExtractiveSummarizer`` keeps the most central sentences (sum of TF-IDF
cosine similarity to the other sentences, LexRank's degree centrality) within
a token budget, in their original order; sentences less than half as central
as the average are off-topic and never used to fill the budget.
"""

from __future__ import annotations

import calendar
import math
import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

from ucma.memory.importance import classify_importance
from ucma.providers.base import ExtractedFact

__all__ = ["HeuristicImportance", "ExtractiveSummarizer", "RuleFactExtractor"]

_GENERIC_SPEAKERS = frozenset({"user", "system", "assistant", "tool_result", "environment", "tool"})
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(r",?\s+(?:and|but)\s+(?=(?:I|[Hh]e|[Ss]he|[Tt]hey|[Ww]e|[Mm]y)\b)")
_LABEL = re.compile(r"^[A-Z][\w -]{0,20}:\s+")
_LEAD_IN = re.compile(
    r"^(?:(?:please\s+)?(?:remember|note|recall)(?:\s+that)?|don'?t\s+forget(?:\s+that)?|"
    r"do\s+not\s+forget(?:\s+that)?|fyi|btw|by\s+the\s+way|just\s+so\s+you\s+know)[,:]?\s+",
    re.IGNORECASE,
)
_NAME = r"[A-Z][\w'-]*(?:\s+(?:[A-Z][\w'-]*|of|de|van|von))*"
_PHRASE = r"(?:[Tt]he|[Oo]ur|[Tt]his|[Tt]hat)\s+[\w-]+(?:\s+[\w-]+){0,3}?"
_SUBJECT = rf"(?P<subject>{_PHRASE}|{_NAME}|I|[Hh]e|[Ss]he|[Tt]hey|[Ww]e)"
_OBJECT = r"(?P<object>[^.;!?]+?)"
_END = r"\s*(?:[.;!?]|,?\s+(?:but|because|and then|so|since|which)\b|$)"
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = (
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{{4}}))?\b",
               re.IGNORECASE),
    re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+(?P<year>\d{{4}}))?\b",
               re.IGNORECASE),
)  # fmt: skip
_KNOWN_VERBS = (
    "uses|use|needs|need|owns|own|has|have|speaks|speak|studies|study|manages|manage|"
    "leads|lead|builds|build|maintains|maintain|visited|joined|founded|teaches|teach|"
    "drives|drive|plays|play|runs|run|supports|support|depends on|relies on|reports to"
)
_PREFERENCE_VERBS = {
    "prefer": "prefers", "like": "likes", "love": "loves", "enjoy": "enjoys",
    "hate": "hates", "dislike": "dislikes", "use": "uses", "want": "wants",
}  # fmt: skip
_PARTICLES = frozenset({"to", "in", "from", "at", "with", "for", "on", "into", "by", "as"})
_STOP_OBJECTS = frozenset({"it", "this", "that", "there", "here", "them", "him", "her", "so"})

_RULES: tuple[tuple[str, re.Pattern[str], float], ...] = (
    ("my", re.compile(rf"\b[Mm]y\s+(?P<what>[\w' -]{{1,40}}?)\s+(?:is|are|was)\s+{_OBJECT}{_END}"),
     0.8),
    ("pref", re.compile(
        r"\bI\s+(?:really\s+|strongly\s+|also\s+|do\s+|always\s+)?"
        rf"(?P<verb>prefer|like|love|enjoy|hate|dislike)\s+{_OBJECT}{_END}"), 0.8),
    ("works", re.compile(
        rf"^{_SUBJECT}\s+(?:works?|worked|is working)\s+(?P<p>at|for)\s+{_OBJECT}{_END}"), 0.6),
    ("lives", re.compile(rf"^{_SUBJECT}\s+(?:lives?|lived|is living)\s+in\s+{_OBJECT}{_END}"), 0.6),
    ("set", re.compile(rf"^{_SUBJECT}\s+(?:is|are|was|were)\s+set\s+to\s+{_OBJECT}{_END}"), 0.6),
    ("wants", re.compile(rf"^{_SUBJECT}\s+(?:wants?|wanted|plans?|needs?)\s+to\s+{_OBJECT}{_END}"),
     0.6),
    ("ing", re.compile(rf"^{_SUBJECT}\s+(?:is|are|was|were)\s+(?P<verb>\w+ing)\s+{_OBJECT}{_END}"),
     0.6),
    ("verb", re.compile(rf"^{_SUBJECT}\s+(?P<verb>{_KNOWN_VERBS})\s+{_OBJECT}{_END}"), 0.6),
    ("is", re.compile(
        rf"^{_SUBJECT}\s+(?P<verb>is|are|was)\s+(?P<neg>not\s+)?(?:an?\s+|the\s+)?{_OBJECT}{_END}"),
     0.6),
)  # fmt: skip
_GENERIC_EVENT = re.compile(
    rf"^{_SUBJECT}\s+(?P<verb>[a-z]+)(?:\s+(?P<p>{'|'.join(sorted(_PARTICLES))}))?\s+{_OBJECT}{_END}"
)


class RuleFactExtractor:
    """The offline ``FactExtractor``: regular expressions over sentences."""

    async def extract_facts(
        self, content: str, *, speaker: str = "user", reference_time: float | None = None
    ) -> list[ExtractedFact]:
        return self.extract(content, speaker=speaker, reference_time=reference_time)

    def extract(
        self, content: str, *, speaker: str = "user", reference_time: float | None = None
    ) -> list[ExtractedFact]:
        """Synchronous form of ``extract_facts`` (pure: same input, same output)."""
        me = "user" if speaker.strip().lower() in _GENERIC_SPEAKERS else speaker.strip()
        found: dict[tuple[str, str, str], ExtractedFact] = {}
        last_name: str | None = None
        clauses = [c for raw in _SENTENCE.split(content) for c in _CLAUSE.split(raw)]
        for raw in clauses:
            sentence = _LEAD_IN.sub("", _LABEL.sub("", raw.strip()))
            if not sentence:
                continue
            when, sentence = _take_date(sentence, reference_time)
            for fact in self._sentence_facts(sentence, me, last_name, when):
                found.setdefault(
                    (fact.subject.lower(), fact.predicate.lower(), fact.object.lower()), fact
                )
            name = re.match(_NAME, sentence)
            if name and name.group(0) not in {"I", "The", "This", "That", "Our", "My"}:
                last_name = name.group(0).split()[0] if " " not in name.group(0) else name.group(0)
        return list(found.values())

    def _sentence_facts(
        self, sentence: str, me: str, last_name: str | None, when: float | None
    ) -> list[ExtractedFact]:
        facts: list[ExtractedFact] = []
        for name, pattern, confidence in _RULES:
            match = pattern.search(sentence)
            if match is None:
                continue
            triple = _triple(name, match, me, last_name)
            if triple is not None:
                facts.extend(_expand(*triple, confidence, when, attribute=name == "my"))
                break
        if not facts and when is not None:
            match = _GENERIC_EVENT.search(sentence)
            if match is not None:
                subject = _resolve(match.group("subject"), me, last_name)
                verb = match.group("verb") + (f"_{match.group('p')}" if match.group("p") else "")
                obj = _clean_object(match.group("object"))
                if subject and obj:
                    facts.extend(_expand(subject, verb, obj, 0.6, when))
        return facts


def _triple(
    rule: str, match: re.Match[str], me: str, last_name: str | None
) -> tuple[str, str, str] | None:
    obj = _clean_object(match.group("object"))
    if not obj:
        return None
    if rule == "my":
        what = " ".join(match.group("what").split()).lower()
        return me, what.replace(" ", "_"), obj
    if rule == "pref":
        return me, _PREFERENCE_VERBS[match.group("verb").lower()], obj
    subject = _resolve(match.group("subject"), me, last_name)
    if subject is None:
        return None
    if rule == "works":
        return subject, "works_at", obj
    if rule == "lives":
        return subject, "lives_in", obj
    if rule == "set":
        return subject, "is_set_to", obj
    if rule == "wants":
        return subject, "wants_to", obj
    if rule == "ing":
        return subject, match.group("verb").lower(), obj
    if rule == "verb":
        return subject, "_".join(match.group("verb").lower().split()), obj
    return subject, "is_not" if match.group("neg") else "is", obj


def _expand(
    subject: str,
    predicate: str,
    obj: str,
    confidence: float,
    when: float | None,
    attribute: bool = False,
) -> list[ExtractedFact]:
    """The triple, plus (A, uses, B) when the object reads "A with B"."""
    head, sep, tail = obj.partition(" with ")
    facts = [_fact(subject, predicate, head if sep else obj, confidence, when, attribute)]
    if sep and head.strip() and tail.strip():
        facts.append(_fact(head.strip(), "uses", _clean_object(tail), confidence - 0.1, when))
    return facts


def _fact(
    subject: str,
    predicate: str,
    obj: str,
    confidence: float,
    when: float | None,
    attribute: bool = False,
) -> ExtractedFact:
    if attribute:
        text = f"{subject}'s {predicate.replace('_', ' ')} is {obj}"
    elif predicate.endswith("ing") and "_" not in predicate:
        text = f"{subject} is {predicate} {obj}"
    else:
        text = f"{subject} {predicate.replace('_', ' ')} {obj}"
    return ExtractedFact(subject, predicate, obj, text, round(confidence, 2), valid_from=when)


def _resolve(subject: str, me: str, last_name: str | None) -> str | None:
    lowered = subject.lower()
    if lowered in {"i", "we"}:
        return me
    if lowered in {"he", "she", "they"}:
        return last_name
    words = subject.split()
    if words[0].lower() in {"the", "this", "that"}:
        words = words[1:]
    elif words[0].lower() == "our":
        words = [me, *words[1:]] if me != "user" else words[1:]
    return " ".join(words) or None


def _clean_object(text: str) -> str:
    words = text.strip(" ,:\"'").split()
    while words and words[0].lower() in {"a", "an", "the"}:
        words = words[1:]
    if not words or (len(words) == 1 and words[0].lower() in _STOP_OBJECTS):
        return ""
    return " ".join(words[:12]).rstrip(",")


def _take_date(sentence: str, reference_time: float | None) -> tuple[float | None, str]:
    """The date a sentence mentions (UTC midnight) and the sentence without it."""
    for pattern in _DATES:
        match = pattern.search(sentence)
        if match is None:
            continue
        groups = match.groupdict()
        month = int(groups["mnum"]) if groups.get("mnum") else _MONTHS[groups["month"].lower()]
        year = groups.get("year")
        if year is None:
            if reference_time is None:
                continue
            year = datetime.fromtimestamp(reference_time, UTC).year
        try:
            when = datetime(int(year), month, int(groups["day"]), tzinfo=UTC).timestamp()
        except ValueError:
            continue
        start, end = match.span()
        before = re.sub(r"(?:,\s*)?\b(?:on|in|since|by)\s*$", "", sentence[:start], flags=re.I)
        rest = (before.rstrip() + " " + sentence[end:].lstrip(" ,")).strip()
        return when, rest[:1].upper() + rest[1:] if rest[:1].islower() and not before else rest
    return None, sentence


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
