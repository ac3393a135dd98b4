"""Calling user-supplied providers safely: the engine's side of the protocols.

``ucma.providers.base`` publishes structural protocols, so any object with the
right methods plugs in, subclass or not. This module is how the engine calls
such an object without trusting it:

- optional keywords are passed only when the implementation accepts them: an
  extractor written before ``reference_time`` existed (``extract_facts(content,
  *, speaker)``) is called without it, decided once per method from its
  signature, rather than failing with a bare ``TypeError``;
- a plain (non-async) method is accepted too: its result is used directly;
- results are checked against the contract, and anything else raises
  ``ProviderError`` naming the provider and what was expected;
- an exception that is not a ``UCMAError`` is re-raised as ``ProviderError``
  (chained), so ``sleep()`` fails with one typed error whatever the provider.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from ucma.errors import ProviderError, UCMAError
from ucma.providers.base import ExtractedFact, Providers
from ucma.types import Provenance

__all__ = ["CheckedProviders", "provider_name"]


def provider_name(provider: object) -> str:
    """How errors and metadata name a provider: its class name."""
    return type(provider).__name__


class CheckedProviders:
    """The members of a ``Providers``, called through their contracts.

    ``providers`` keeps the originals (consolidation records the extractor's
    class name on the facts it derives).
    """

    def __init__(self, providers: Providers) -> None:
        self.providers = providers
        self._accepts: dict[str, frozenset[str] | None] = {}

    async def extract_facts(
        self, content: str, *, speaker: str, reference_time: float | None
    ) -> list[ExtractedFact]:
        """The extractor's facts for ``content``, each re-validated (non-empty
        fields of at most 500 characters, confidence in [0, 1]). A mapping in the
        list is accepted and validated as an LLM's JSON would be."""
        extractor = self.providers.fact_extractor
        raw = await self._call(
            extractor,
            "extract_facts",
            (content,),
            {"speaker": speaker, "reference_time": reference_time},
        )
        name = provider_name(extractor)
        if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Sequence):
            raise ProviderError(
                f"fact extractor {name}.extract_facts returned {type(raw).__name__}; "
                "expected a list of ExtractedFact"
            )
        return [_checked_fact(item, name) for item in raw]

    async def summarize(self, content: str, max_tokens: int) -> str | None:
        """The summarizer's summary, or None when it is blank (nothing condensed
        survived the budget, e.g. one unbroken token longer than it: the episode
        then keeps its full content and no summary)."""
        summarizer = self.providers.summarizer
        summary = await self._call(summarizer, "summarize", (content, max_tokens), {})
        if not isinstance(summary, str):
            raise ProviderError(
                f"summarizer {provider_name(summarizer)}.summarize returned "
                f"{type(summary).__name__}; expected a string"
            )
        return summary.strip() or None

    async def classify_importance(self, content: str, source: str) -> float:
        """The classifier's score: a finite number in [0, 1]. Only called when
        ``providers.importance`` is set."""
        classifier = self.providers.importance
        if classifier is None:
            raise ProviderError("no importance classifier is configured")
        score = await self._call(classifier, "classify_importance", (content, source), {})
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
            or not 0.0 <= score <= 1.0
        ):
            raise ProviderError(
                f"importance classifier {provider_name(classifier)}.classify_importance "
                f"returned {score!r:.80}; expected a number in [0, 1]"
            )
        return float(score)

    async def _call(
        self,
        provider: object,
        method_name: str,
        args: tuple[Any, ...],
        optional: dict[str, Any],
    ) -> Any:
        name = f"{provider_name(provider)}.{method_name}"
        method = getattr(provider, method_name, None)
        if not callable(method):
            raise ProviderError(f"{provider_name(provider)} has no method {method_name}()")
        accepted = self._accepted(name, method, optional)
        kwargs = {k: v for k, v in optional.items() if accepted is None or k in accepted}
        try:
            result = method(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        except UCMAError:
            raise
        except Exception as exc:
            raise ProviderError(f"{name} failed: {type(exc).__name__}: {exc}") from exc
        return result

    def _accepted(
        self, name: str, method: Callable[..., Any], optional: dict[str, Any]
    ) -> frozenset[str] | None:
        """The optional keywords ``method`` takes (None: all of them), read once."""
        if name not in self._accepts:
            self._accepts[name] = _keywords_accepted(method, optional)
        return self._accepts[name]


def _keywords_accepted(
    method: Callable[..., Any], optional: Mapping[str, Any]
) -> frozenset[str] | None:
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return None  # no readable signature (a C callable): pass everything
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    keyword_kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return frozenset(p.name for p in parameters if p.kind in keyword_kinds and p.name in optional)


def _checked_fact(item: object, name: str) -> ExtractedFact:
    if isinstance(item, Mapping):
        raw: Mapping[str, Any] = item
        provenance = Provenance.GENERATED
    elif isinstance(item, ExtractedFact):
        raw = asdict(item)
        provenance = item.provenance
    else:
        raise ProviderError(
            f"fact extractor {name}.extract_facts returned a {type(item).__name__} in its "
            "list; expected ExtractedFact records"
        )
    try:
        fact = ExtractedFact.validated(raw, provenance=provenance)
    except ProviderError as exc:
        raise ProviderError(f"fact extractor {name}.extract_facts: {exc}") from exc
    valid_from = raw.get("valid_from")
    if valid_from is None:
        return fact
    if (
        isinstance(valid_from, bool)
        or not isinstance(valid_from, int | float)
        or not math.isfinite(valid_from)
    ):
        raise ProviderError(
            f"fact extractor {name}.extract_facts returned valid_from {valid_from!r:.40}; "
            "expected epoch seconds or None"
        )
    return ExtractedFact(
        fact.subject,
        fact.predicate,
        fact.object,
        fact.content,
        fact.confidence,
        float(valid_from),
        fact.provenance,
    )
