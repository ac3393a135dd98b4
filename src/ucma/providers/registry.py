"""Providers from "provider:model" strings, with vendors imported lazily.

    "heuristic"                 the offline rules (ucma.providers.heuristics)
    "openai:gpt-4o-mini"        api.openai.com (or ``base_url``)
    "ollama:llama3.1"           http://localhost:11434/v1 unless ``base_url`` is given
    "vllm:<model>", "llamacpp:<model>", "lmstudio:<model>", "openai-compatible:<model>"
                                any OpenAI-compatible server; ``base_url`` is required
                                except for the local defaults below

Local servers get the placeholder API key "local" when none is given; OpenAI
itself falls back to ``OPENAI_API_KEY`` inside the SDK (documented there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ucma.errors import ConfigError
from ucma.providers.base import Providers
from ucma.providers.heuristics import ExtractiveSummarizer, RuleFactExtractor

if TYPE_CHECKING:
    import httpx

__all__ = ["KNOWN_PROVIDERS", "chat_provider", "providers_from_config"]

_LOCAL_DEFAULTS = {
    "ollama": "http://localhost:11434/v1",
    "llamacpp": "http://localhost:8080/v1",
    "lmstudio": "http://localhost:1234/v1",
    "vllm": "http://localhost:8000/v1",
}
KNOWN_PROVIDERS = frozenset({"heuristic", "openai", "openai-compatible", *_LOCAL_DEFAULTS})


def chat_provider(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    http_client: httpx.AsyncClient | None = None,
    timeout: float = 60.0,
    attempts: int = 2,
) -> Any:
    """The provider named by ``spec``: ``RuleFactExtractor``-backed heuristics for
    "heuristic", an ``OpenAIChatProvider`` for "<provider>:<model>"."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError("a provider spec is a non-empty string such as 'ollama:llama3.1'")
    name, sep, model = spec.strip().partition(":")
    if name == "heuristic" and not sep:
        return None
    if name not in KNOWN_PROVIDERS or not sep or not model:
        raise ConfigError(
            f"unknown provider {spec!r}; use 'heuristic' or '<provider>:<model>' with provider "
            f"one of {sorted(KNOWN_PROVIDERS - {'heuristic'})}"
        )
    url = base_url or _LOCAL_DEFAULTS.get(name)
    if name == "openai-compatible" and url is None:
        raise ConfigError(f"{spec!r} needs a base_url (the server's /v1 address)")
    key = api_key if api_key is not None or name == "openai" else "local"
    from ucma.providers.openai import OpenAIChatProvider

    return OpenAIChatProvider(
        model,
        base_url=url,
        api_key=key,
        http_client=http_client,
        timeout=timeout,
        attempts=attempts,
        provider_name=name,
    )


def providers_from_config(
    llm: str = "heuristic",
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    http_client: httpx.AsyncClient | None = None,
    classify_importance: bool = False,
    timeout: float = 60.0,
    attempts: int = 2,
) -> Providers:
    """The ``Providers`` consolidation uses: an LLM for summaries and facts when
    ``llm`` names one (and for importance if ``classify_importance``), otherwise
    the offline heuristics."""
    model = chat_provider(
        llm,
        base_url=base_url,
        api_key=api_key,
        http_client=http_client,
        timeout=timeout,
        attempts=attempts,
    )
    if model is None:
        return Providers(ExtractiveSummarizer(), RuleFactExtractor())
    return Providers(model, model, model if classify_importance else None)
