"""Deterministic fakes of remote model APIs, shipped so that tests never call a paid service.

:class:`FakeOpenAIServer` answers the OpenAI HTTP API in-process through an
:class:`httpx.MockTransport`: ``POST .../embeddings`` returns a vector derived from a hash of each
text, and ``POST .../chat/completions`` returns scripted replies in order. Both can be scripted
to fail, and every request is recorded. Pass ``server.async_client()`` as the ``http_client`` of
any OpenAI-SDK based class::

    server = FakeOpenAIServer(dimension=8)
    embedder = OpenAIEmbedder("fake-embed", 8, api_key="test", http_client=server.async_client())
    server.fail_embeddings(Failure.SERVER_ERROR, on_call=2)

Needs ``httpx`` (installed with ``ucma[openai]`` or ``ucma[dev]``).
"""

from __future__ import annotations

import base64
import enum
import hashlib
import json
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

__all__ = [
    "FAKE_BASE_URL",
    "ChatReply",
    "FakeOpenAIServer",
    "Failure",
    "RecordedRequest",
    "fake_embedding",
]

#: Base URL of the fake; any URL works with its transport, this one can never resolve.
FAKE_BASE_URL = "http://fake-openai.invalid/v1"


def fake_embedding(text: str, dimension: int) -> np.ndarray:
    """The unit float32 vector the fake returns for ``text``: a function of the text alone."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(dimension)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


class Failure(enum.Enum):
    """Ways a scripted call fails. The first three apply to both endpoints, the rest to
    embeddings only."""

    SERVER_ERROR = "server_error"  # HTTP 500, OpenAI-style error body, retry-after-ms: 1
    MALFORMED_JSON = "malformed_json"  # HTTP 200 whose JSON body is cut off
    TIMEOUT = "timeout"  # the transport raises httpx.ReadTimeout
    WRONG_DIMENSION = "wrong_dimension"  # every vector one element short
    WRONG_COUNT = "wrong_count"  # one vector fewer than there were inputs
    ZERO_VECTOR = "zero_vector"  # the first vector is all zeros
    NON_FINITE = "non_finite"  # the first vector holds a NaN


#: A scripted chat reply: assistant text; a full response body (a mapping, sent as JSON);
#: a raw ``httpx.Response``; a :class:`Failure`; or an exception raised inside the transport.
ChatReply = str | Mapping[str, Any] | httpx.Response | Failure | BaseException


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the fake received; ``body`` is the parsed JSON, or None if it was not JSON."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


class FakeOpenAIServer:
    """An in-process OpenAI-compatible API for tests; safe to share between tasks and threads.

    Embeddings are :func:`fake_embedding` of each input at ``dimension`` (or at the request's
    ``dimensions``), in ``float`` or ``base64`` encoding as requested; with
    ``reverse_order=True`` the data list comes back reversed (indices stay correct), to check
    that clients order by ``index``. Unknown paths answer 404, invalid bodies 400.
    """

    def __init__(self, *, dimension: int = 384, reverse_order: bool = False) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be at least 1, got {dimension}")
        self.dimension = dimension
        self.reverse_order = reverse_order
        self.requests: list[RecordedRequest] = []
        self._embedding_calls = 0
        self._embedding_failures: dict[int, Failure] = {}
        self._chat_replies: deque[ChatReply] = deque()
        self._chat_calls = 0
        self._lock = threading.Lock()
        self.transport = httpx.MockTransport(self._handle)

    def async_client(self, **kwargs: Any) -> httpx.AsyncClient:
        """An ``httpx.AsyncClient`` whose every request goes to this fake."""
        return httpx.AsyncClient(transport=self.transport, base_url=FAKE_BASE_URL, **kwargs)

    def fail_embeddings(
        self, failure: Failure, *, on_call: int | None = None, times: int = 1
    ) -> None:
        """Make embeddings calls ``on_call`` .. ``on_call + times - 1`` fail with ``failure``.

        Calls are counted from 1 over the fake's lifetime, retries included; ``on_call=None``
        means the next call.
        """
        with self._lock:
            first = self._embedding_calls + 1 if on_call is None else on_call
            for call in range(first, first + times):
                self._embedding_failures[call] = failure

    def queue_chat(self, *replies: ChatReply) -> None:
        """Append replies that the next chat-completions calls return, one per call, in order.

        With the queue empty a call gets HTTP 400 saying so (400, so SDK clients do not retry).
        """
        with self._lock:
            self._chat_replies.extend(replies)

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        """Recorded requests to the embeddings endpoint, oldest first."""
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Recorded requests to the chat-completions endpoint, oldest first."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def pending_chat_replies(self) -> int:
        """Scripted chat replies not yet consumed."""
        with self._lock:
            return len(self._chat_replies)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        try:
            body = json.loads(request.content) if request.content else None
        except ValueError:
            body = None
        path = request.url.path
        with self._lock:
            self.requests.append(RecordedRequest(request.method, path, dict(request.headers), body))
        if request.method == "POST" and path.endswith("/embeddings"):
            return self._embeddings(request, body)
        if request.method == "POST" and path.endswith("/chat/completions"):
            return self._chat(request, body)
        return _error(404, f"FakeOpenAIServer does not serve {request.method} {path}")

    def _embeddings(self, request: httpx.Request, body: Any) -> httpx.Response:
        with self._lock:
            self._embedding_calls += 1
            failure = self._embedding_failures.pop(self._embedding_calls, None)
        if failure is not None and (response := _transport_failure(failure, request)) is not None:
            return response
        if not isinstance(body, dict):
            return _error(400, "request body must be a JSON object")
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs:
            return _error(400, "'input' must be a non-empty string or list of strings")
        if not all(isinstance(text, str) and text for text in inputs):
            return _error(400, "every input must be a non-empty string (token arrays unsupported)")
        width = body.get("dimensions") or self.dimension
        vectors = [fake_embedding(text, width) for text in inputs]
        if failure is Failure.WRONG_DIMENSION:
            vectors = [vector[:-1] for vector in vectors]
        elif failure is Failure.WRONG_COUNT:
            vectors = vectors[:-1]
        elif failure is Failure.ZERO_VECTOR:
            vectors[0] = np.zeros_like(vectors[0])
        elif failure is Failure.NON_FINITE:
            vectors[0] = vectors[0].copy()
            vectors[0][0] = np.nan
        base64_encoded = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": index,
                "embedding": (
                    base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
                    if base64_encoded
                    else [float(x) for x in vector]
                ),
            }
            for index, vector in enumerate(vectors)
        ]
        if self.reverse_order:
            data.reverse()
        tokens = sum(len(text.split()) for text in inputs)
        return httpx.Response(
            200,
            json={
                "object": "list",
                "data": data,
                "model": body.get("model", ""),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _chat(self, request: httpx.Request, body: Any) -> httpx.Response:
        with self._lock:
            self._chat_calls += 1
            call = self._chat_calls
            reply = self._chat_replies.popleft() if self._chat_replies else None
        if reply is None:
            return _error(
                400, "FakeOpenAIServer has no scripted chat reply left; add one with queue_chat()"
            )
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        if isinstance(reply, Failure):
            response = _transport_failure(reply, request)
            if response is None:
                raise ValueError(f"{reply} applies to embeddings only, not to chat completions")
            return response
        if isinstance(reply, Mapping):
            return httpx.Response(200, json=dict(reply))
        prompt = body.get("messages", []) if isinstance(body, dict) else []
        prompt_tokens = sum(
            len(str(m.get("content", "")).split()) for m in prompt if isinstance(m, dict)
        )
        completion_tokens = len(reply.split())
        return httpx.Response(
            200,
            json={
                "id": f"chatcmpl-fake-{call}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "") if isinstance(body, dict) else "",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )


def _transport_failure(failure: Failure, request: httpx.Request) -> httpx.Response | None:
    """The response (or raised timeout) for failures independent of the payload, else None."""
    if failure is Failure.TIMEOUT:
        raise httpx.ReadTimeout("FakeOpenAIServer: scripted timeout", request=request)
    if failure is Failure.SERVER_ERROR:
        response = _error(500, "FakeOpenAIServer: scripted server error", kind="server_error")
        # Lets SDK clients retry at once instead of backing off for seconds.
        response.headers["retry-after-ms"] = "1"
        return response
    if failure is Failure.MALFORMED_JSON:
        return httpx.Response(
            200,
            content=b'{"object": "list", "data": [',
            headers={"content-type": "application/json"},
        )
    return None


def _error(status: int, message: str, *, kind: str = "invalid_request_error") -> httpx.Response:
    return httpx.Response(
        status, json={"error": {"message": message, "type": kind, "param": None, "code": None}}
    )
