"""The OpenAI SDK client both OpenAI-compatible components build (chat provider, embedder).

The ``openai`` package is imported here, when a client is built, never at
module import (``pip install 'ucma[openai]'``). A missing package or API key
is a ``ConfigError`` naming the component that needed it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ucma.errors import ConfigError

if TYPE_CHECKING:
    import httpx

__all__ = ["async_openai_client"]


def async_openai_client(
    component: str,
    *,
    key_holder: str,
    api_key: str | None,
    base_url: str | None,
    http_client: httpx.AsyncClient | None,
    timeout: float,
    max_retries: int,
) -> Any:
    """An ``openai.AsyncOpenAI`` for ``component``; ``key_holder`` names it in the
    missing-key message. ``api_key=None`` falls back to ``OPENAI_API_KEY``."""
    try:
        import openai
    except ImportError as exc:
        raise ConfigError(
            f"{component} needs the openai package: pip install 'ucma[openai]'"
        ) from exc
    try:
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            http_client=http_client,
            timeout=timeout,
            max_retries=max_retries,
        )
    except openai.OpenAIError as exc:
        raise ConfigError(
            f"no API key for {key_holder}: pass api_key=... or set OPENAI_API_KEY; "
            "local servers such as Ollama accept any placeholder, e.g. api_key='local'"
        ) from exc
