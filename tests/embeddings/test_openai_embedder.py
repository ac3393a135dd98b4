"""OpenAIEmbedder through the official SDK against the in-process FakeOpenAIServer."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import numpy as np
import pytest

import ucma.embeddings
from ucma.embeddings import CachedEmbedder, OpenAIEmbedder
from ucma.errors import ConfigError, EmbeddingError, ValidationError
from ucma.providers.testing import FAKE_BASE_URL, Failure, FakeOpenAIServer, fake_embedding

DIM = 8
SRC = Path(ucma.embeddings.__file__).resolve().parents[2]


@pytest.fixture
def server() -> FakeOpenAIServer:
    return FakeOpenAIServer(dimension=DIM)


@pytest.fixture
async def http_client(server: FakeOpenAIServer) -> AsyncIterator[httpx.AsyncClient]:
    async with server.async_client() as client:
        yield client


def make_embedder(http_client: httpx.AsyncClient, **kwargs: object) -> OpenAIEmbedder:
    options: dict[str, object] = {
        "base_url": FAKE_BASE_URL,
        "api_key": "test-key",
        "http_client": http_client,
        "max_retries": 0,
    }
    options.update(kwargs)
    return OpenAIEmbedder("fake-embed", DIM, **options)  # type: ignore[arg-type]


def expected(texts: list[str]) -> np.ndarray:
    return np.stack([fake_embedding(text, DIM) for text in texts])


@pytest.mark.anyio
async def test_round_trip(server: FakeOpenAIServer, http_client: httpx.AsyncClient) -> None:
    embedder = make_embedder(http_client)
    texts = ["The JWT token expired", "banana bread", "clock skew"]
    vectors = await embedder.embed(texts)
    assert vectors.shape == (3, DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)
    assert embedder.model_id == "openai:fake-embed"
    assert embedder.dimension == DIM
    (request,) = server.embedding_requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "fake-embed", "input": texts, "encoding_format": "float"}
    assert request.headers["authorization"] == "Bearer test-key"


@pytest.mark.anyio
async def test_rows_are_placed_by_index() -> None:
    server = FakeOpenAIServer(dimension=DIM, reverse_order=True)
    async with server.async_client() as client:
        texts = [f"text {i}" for i in range(5)]
        vectors = await make_embedder(client).embed(texts)
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)


@pytest.mark.anyio
async def test_large_inputs_are_split_into_batches(
    server: FakeOpenAIServer, http_client: httpx.AsyncClient
) -> None:
    texts = [f"memory {i}" for i in range(5)]
    vectors = await make_embedder(http_client, batch_size=2).embed(texts)
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)
    assert [r.body["input"] for r in server.embedding_requests] == [
        texts[0:2],
        texts[2:4],
        texts[4:5],
    ]


@pytest.mark.anyio
async def test_empty_and_invalid_input_send_no_request(
    server: FakeOpenAIServer, http_client: httpx.AsyncClient
) -> None:
    embedder = make_embedder(http_client)
    assert (await embedder.embed([])).shape == (0, DIM)
    with pytest.raises(ValidationError):
        await embedder.embed(["ok", ""])
    with pytest.raises(ValidationError):
        await embedder.embed("a bare string")
    assert server.requests == []


@pytest.mark.anyio
@pytest.mark.parametrize("failure", list(Failure))
async def test_every_failure_raises_embedding_error(
    server: FakeOpenAIServer, http_client: httpx.AsyncClient, failure: Failure
) -> None:
    server.fail_embeddings(failure)
    embedder = make_embedder(http_client)
    with pytest.raises(EmbeddingError) as raised:
        await embedder.embed(["alpha", "beta", "gamma"])
    assert "fake-embed" in str(raised.value)
    # The next call succeeds: a failure leaves no state behind.
    np.testing.assert_allclose(await embedder.embed(["alpha"]), expected(["alpha"]), atol=1e-6)


@pytest.mark.anyio
async def test_failure_on_a_later_batch_returns_nothing(
    server: FakeOpenAIServer, http_client: httpx.AsyncClient
) -> None:
    server.fail_embeddings(Failure.SERVER_ERROR, on_call=2)
    embedder = make_embedder(http_client, batch_size=2)
    with pytest.raises(EmbeddingError, match="500"):
        await embedder.embed([f"t{i}" for i in range(5)])
    assert len(server.embedding_requests) == 2


@pytest.mark.anyio
async def test_failure_is_not_cached(
    server: FakeOpenAIServer, http_client: httpx.AsyncClient
) -> None:
    server.fail_embeddings(Failure.ZERO_VECTOR)
    cached = CachedEmbedder(make_embedder(http_client))
    with pytest.raises(EmbeddingError, match="zero vectors"):
        await cached.embed(["a", "b"])
    assert cached.stats().size == 0
    np.testing.assert_allclose(await cached.embed(["a", "b"]), expected(["a", "b"]), atol=1e-6)


@pytest.mark.anyio
async def test_sdk_retries_a_server_error(
    server: FakeOpenAIServer, http_client: httpx.AsyncClient
) -> None:
    server.fail_embeddings(Failure.SERVER_ERROR, on_call=1)
    vectors = await make_embedder(http_client, max_retries=1).embed(["retry me"])
    np.testing.assert_allclose(vectors, expected(["retry me"]), atol=1e-6)
    assert len(server.embedding_requests) == 2


@pytest.mark.anyio
async def test_wrong_configured_dimension_is_reported(http_client: httpx.AsyncClient) -> None:
    embedder = OpenAIEmbedder(
        "fake-embed", DIM * 2, api_key="k", http_client=http_client, max_retries=0
    )
    with pytest.raises(EmbeddingError, match="set dimension"):
        await embedder.embed(["a"])


@pytest.mark.anyio
async def test_aclose_leaves_an_injected_client_open(http_client: httpx.AsyncClient) -> None:
    embedder = make_embedder(http_client)
    await embedder.aclose()
    assert not http_client.is_closed


@pytest.mark.anyio
async def test_aclose_closes_its_own_client() -> None:
    embedder = OpenAIEmbedder("m", 4, base_url=FAKE_BASE_URL, api_key="k")
    await embedder.aclose()


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("", 8), {}),
        (("m", 0), {}),
        (("m", 8), {"batch_size": 0}),
        (("m", 8), {"batch_size": 2049}),
        (("m", 8), {"timeout": 0}),
        (("m", 8), {"max_retries": -1}),
    ],
)
def test_invalid_settings_raise_config_error(
    args: tuple[str, int], kwargs: dict[str, object]
) -> None:
    with pytest.raises(ConfigError):
        OpenAIEmbedder(*args, api_key="k", **kwargs)  # type: ignore[arg-type]


def test_missing_api_key_raises_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIEmbedder("m", 8)


def test_missing_sdk_raises_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ConfigError, match=r"pip install 'ucma\[openai\]'"):
        OpenAIEmbedder("m", 8, api_key="k")


def test_importing_the_package_does_not_import_openai() -> None:
    script = (
        "import sys, ucma.embeddings as e; assert 'openai' not in sys.modules; "
        "e.OpenAIEmbedder; assert 'openai' not in sys.modules; print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC)},
        check=False,
    )
    assert result.stdout.strip() == "ok", result.stderr


# The fake's chat-completions responder, which the LLM providers' tests build on.


@pytest.mark.anyio
async def test_fake_chat_replies_in_order_then_refuses(server: FakeOpenAIServer) -> None:
    import openai
    from openai.types.chat import ChatCompletionMessageParam

    server.queue_chat(
        "first answer",
        Failure.SERVER_ERROR,
        httpx.ReadTimeout("scripted"),
        {"choices": "not a list"},
    )
    async with server.async_client() as http_client:
        client = openai.AsyncOpenAI(api_key="k", http_client=http_client, max_retries=0)
        messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hello there"}]
        reply = await client.chat.completions.create(model="fake-chat", messages=messages)
        assert reply.choices[0].message.content == "first answer"
        assert reply.usage is not None and reply.usage.prompt_tokens == 2
        with pytest.raises(openai.InternalServerError):
            await client.chat.completions.create(model="fake-chat", messages=messages)
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(model="fake-chat", messages=messages)
        raw = await client.chat.completions.with_raw_response.create(
            model="fake-chat", messages=messages
        )
        assert raw.http_response.json() == {"choices": "not a list"}
        with pytest.raises(openai.BadRequestError, match="no scripted chat reply left"):
            await client.chat.completions.create(model="fake-chat", messages=messages)
    assert len(server.chat_requests) == 5
    assert server.chat_requests[0].body["messages"] == messages
    assert server.pending_chat_replies == 0


@pytest.mark.anyio
async def test_fake_serves_base64_embeddings_and_unknown_paths(server: FakeOpenAIServer) -> None:
    import openai

    async with server.async_client() as http_client:
        client = openai.AsyncOpenAI(api_key="k", http_client=http_client, max_retries=0)
        response = await client.embeddings.create(model="m", input=["a", "b"])  # base64
        np.testing.assert_allclose(
            np.array([item.embedding for item in response.data]), expected(["a", "b"]), atol=1e-6
        )
        missing = await http_client.get("/v1/models")
        assert missing.status_code == 404
