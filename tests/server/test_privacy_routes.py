"""The content guard over HTTP: refusals are 422 naming the kind, tokens are revealed
to their owner and to nobody else."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from tests.server.conftest import KeyedClient, error_of

from ucma.privacy.tokens import TOKEN_PATTERN

pytestmark = pytest.mark.anyio

SECRET = "ghp_" + "Q7w8E9r0T1" * 4
EMAIL = "omar.haddad@example.net"


async def test_a_secret_is_a_422_naming_the_kind_and_never_the_value(keyed: KeyedClient) -> None:
    alice = await keyed("alice")
    response = await alice.post("/v1/observe", json={"content": f"CI token is {SECRET}"})
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "secret_refused"
    assert error["kinds"] == ["code_host_token"]
    assert SECRET not in response.text
    batch = await alice.post(
        "/v1/observe/batch",
        json={"items": [{"content": "Omar likes chess"}, {"content": f"pwd={SECRET}"}]},
    )
    assert batch.status_code == 422 and error_of(batch)["code"] == "secret_refused"
    listed = await alice.get("/v1/memories")
    assert "chess" not in listed.text


async def test_tokens_are_revealed_to_the_owner_only(keyed: KeyedClient) -> None:
    alice, bob = await keyed("alice"), await keyed("bob")
    created = await alice.post("/v1/observe", json={"content": f"Omar's email is {EMAIL}"})
    assert created.status_code == 201
    got = await alice.get(f"/v1/memories/{created.json()['id']}")
    content = got.json()["content"]
    assert EMAIL not in got.text
    token = TOKEN_PATTERN.search(content).group()

    revealed = await alice.post("/v1/reveal", json={"text": content})
    assert revealed.json()["text"] == f"Omar's email is {EMAIL}"
    one = await alice.get(f"/v1/tokens/{quote(token)}")
    assert one.status_code == 200 and one.json()["value"] == EMAIL

    theirs = await bob.get(f"/v1/tokens/{quote(token)}")
    unknown = await bob.get(f"/v1/tokens/{quote('[email_0123abcd]')}")
    assert theirs.status_code == unknown.status_code == 404
    assert error_of(theirs)["code"] == error_of(unknown)["code"] == "not_found"
    assert (await bob.post("/v1/reveal", json={"text": content})).json()["text"] == content

    found = await alice.post("/v1/recall", json={"query": f"what is {EMAIL}?"})
    assert found.status_code == 200 and created.json()["id"] in found.text
