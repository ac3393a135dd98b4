"""Summaries, fact extraction and importance through an OpenAI-compatible chat endpoint.

One class, ``OpenAIChatProvider``, serves OpenAI, Ollama, vLLM, the llama.cpp
server and LM Studio: only ``base_url`` and ``api_key`` differ (pydantic-ai's
model/provider split). It implements all three protocols of
``ucma.providers.base``. The ``openai`` SDK is imported when the class is
constructed (``pip install 'ucma[openai]'``), never at module import.

Structured output: fact extraction and importance ask for a JSON object and
validate the reply completely before returning anything. A reply that is not
valid JSON, or JSON of the wrong shape, is retried (``attempts`` in all); if
every attempt fails the call raises ``ProviderError`` and returns nothing, so
a caller can never store half of a malformed answer. Timeouts, HTTP errors and
exceptions inside the transport are retried the same way and end in
``ProviderError`` too.
"""

from __future__ import annotations

import json
import logging
import math
from typing import TYPE_CHECKING, Any

from ucma.errors import ConfigError, ProviderError
from ucma.openai_client import async_openai_client
from ucma.paradigms.distillation import MAX_ITEMS, parse_distilled
from ucma.providers.base import ExtractedFact
from ucma.types import Provenance

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAIChatProvider"]

logger = logging.getLogger(__name__)

_SUMMARY_PROMPT = (
    "Summarise the text for a long-term memory store in at most {budget} tokens. "
    "Keep names, numbers, decisions and outcomes. Reply with the summary only."
)
_FACTS_PROMPT = (
    "Extract durable facts from the text as subject-predicate-object triples. "
    "The speaker is {speaker!r}; first-person statements are about the speaker. "
    'Reply with JSON only: {{"facts": [{{"subject": str, "predicate": str, "object": str, '
    '"content": str, "confidence": number between 0 and 1}}]}}. '
    'Use {{"facts": []}} when there are none.'
)
_IMPORTANCE_PROMPT = (
    "Rate how important it is for an assistant to remember this {source} message long-term, "
    'from 0 (noise) to 1 (critical). Reply with JSON only: {{"importance": number}}.'
)


_DISTILL_PROMPT = (
    "An agent {outcome} a task. Distil at most three reusable items from what it did: "
    "{kind}. Each item has a short title, a one-sentence description of when it applies, "
    "the steps (short imperative instructions), failure_modes (what goes wrong) and a "
    'risk_level ("low", "medium" or "high"). Reply with JSON only: {{"items": [{{"title": '
    'string, "description": string, "steps": [string], "failure_modes": [string], '
    '"risk_level": string}}]}}.'
)
_DISTILL_KIND = {
    True: "strategies that worked, general enough to reuse on similar tasks",
    False: "pitfalls: what to check first or avoid, each step a check or guard",
}

_DECOMPOSE_PROMPT = (
    "Split the user's goal into 2 to 12 subgoals that together achieve it, in the order "
    "to do them. Each subgoal is one short imperative sentence that names what it acts on "
    'and stands on its own. Reply with JSON only: {"subgoals": [string]}.'
)
MAX_SUBGOAL_CHARS = 500


class OpenAIChatProvider:
    """Summarizer, FactExtractor, ImportanceClassifier, TrajectoryDistiller and
    GoalDecomposer over ``/chat/completions``.

    ``api_key=None`` falls back to ``OPENAI_API_KEY`` (the SDK's documented
    behaviour); local servers accept any placeholder. ``http_client`` is used
    as given (tests pass ``FakeOpenAIServer.async_client()``). The SDK's own
    retries are off; ``attempts`` counts every try of one call.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 60.0,
        attempts: int = 2,
        temperature: float = 0.0,
        provider_name: str = "openai",
    ) -> None:
        if not model or not model.strip():
            raise ConfigError("model must name the chat model, e.g. 'gpt-4o-mini'")
        if timeout <= 0:
            raise ConfigError(f"timeout must be positive, got {timeout}")
        if attempts < 1:
            raise ConfigError(f"attempts must be at least 1, got {attempts}")
        self._client = async_openai_client(
            "OpenAIChatProvider",
            key_holder="the chat provider",
            api_key=api_key,
            base_url=base_url,
            http_client=http_client,
            timeout=timeout,
            max_retries=0,
        )
        self._owns_http_client = http_client is None
        self.model = model
        self.model_id = f"{provider_name}:{model}"
        self.attempts = attempts
        self.temperature = temperature
        self.base_url = str(self._client.base_url)

    async def aclose(self) -> None:
        if self._owns_http_client:
            await self._client.close()

    # -- protocols ------------------------------------------------------------------

    async def summarize(self, content: str, max_tokens: int = 150) -> str:
        def parse(text: str) -> str:
            summary = text.strip()
            if not summary:
                raise ProviderError("the summary is empty")
            return summary

        return await self._ask(
            _SUMMARY_PROMPT.format(budget=max_tokens), content, parse, json_mode=False
        )

    async def extract_facts(
        self, content: str, *, speaker: str = "user", reference_time: float | None = None
    ) -> list[ExtractedFact]:
        def parse(text: str) -> list[ExtractedFact]:
            data = _json_object(text)
            facts = data.get("facts")
            if not isinstance(facts, list):
                raise ProviderError("the reply has no 'facts' list")
            return [ExtractedFact.validated(f, provenance=Provenance.GENERATED) for f in facts]

        return await self._ask(_FACTS_PROMPT.format(speaker=speaker), content, parse)

    async def classify_importance(self, content: str, source: str) -> float:
        def parse(text: str) -> float:
            value = _json_object(text).get("importance")
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 0.0 <= value <= 1.0
            ):
                raise ProviderError(f"importance must be a number in [0, 1], got {value!r}")
            return float(value)

        return await self._ask(_IMPORTANCE_PROMPT.format(source=source), content, parse)

    async def distill_trajectory(
        self, task: str, steps: list[str], success: bool, failure_reason: str | None
    ) -> list[dict[str, Any]]:
        def parse(text: str) -> list[dict[str, Any]]:
            items = _json_object(text).get("items")
            parse_distilled(items, success)  # the whole answer is checked, or retried
            assert isinstance(items, list)
            return items[:MAX_ITEMS]

        lines = [f"Task: {task}", "Steps:", *(f"{i}. {s}" for i, s in enumerate(steps, 1))]
        lines.append("Outcome: succeeded" if success else f"Outcome: failed: {failure_reason}")
        prompt = _DISTILL_PROMPT.format(
            outcome="completed" if success else "failed at", kind=_DISTILL_KIND[success]
        )
        return await self._ask(prompt, "\n".join(lines), parse)

    async def decompose_goal(self, goal: str) -> list[str]:
        def parse(text: str) -> list[str]:
            subgoals = _json_object(text).get("subgoals")
            if (
                not isinstance(subgoals, list)
                or not 2 <= len(subgoals) <= 12
                or not all(
                    isinstance(s, str) and s.strip() and len(s) <= MAX_SUBGOAL_CHARS
                    for s in subgoals
                )
            ):
                raise ProviderError("'subgoals' must be a list of 2 to 12 non-empty texts")
            return [s.strip() for s in subgoals]

        return await self._ask(_DECOMPOSE_PROMPT, goal, parse)

    # -- transport ------------------------------------------------------------------

    async def _ask(self, system: str, content: str, parse: Any, *, json_mode: bool = True) -> Any:
        last: Exception | None = None
        for attempt in range(1, self.attempts + 1):
            try:
                text = await self._complete(system, content, json_mode)
                return parse(text)
            except ProviderError as exc:
                last = exc
                logger.warning(
                    "%s attempt %d/%d failed: %s", self.model_id, attempt, self.attempts, exc
                )
        raise ProviderError(
            f"{self.model_id} at {self.base_url} failed after {self.attempts} attempts: {last}"
        ) from last

    async def _complete(self, system: str, content: str, json_mode: bool) -> str:
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}
        try:
            response = await self._client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": content},
                ],
                temperature=self.temperature,
                **extra,
            )
        except Exception as exc:  # SDK, httpx and JSON errors alike: the remote boundary
            raise ProviderError(f"chat request failed: {type(exc).__name__}: {exc}") from exc
        try:
            text = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError) as exc:
            raise ProviderError("the reply has no message content") from exc
        if not isinstance(text, str):
            raise ProviderError("the reply has no message content")
        return text


def _json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text`` (a fenced ```json block is accepted)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[4:] if body.lower().startswith("json") else body
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ProviderError(f"the reply is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ProviderError(f"the reply must be a JSON object, got {type(data).__name__}")
    return data
