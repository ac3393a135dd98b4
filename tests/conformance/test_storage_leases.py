"""LeaseStore: named claims shared by every process of a database (``ucma worker``)."""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from ucma.errors import ValidationError

T = 1_700_000_000.0


def test_a_free_lease_goes_to_the_first_claimant_only(storage):
    assert storage.leases.claim("sleep:a", "w1", T, lease_seconds=60)
    assert not storage.leases.claim("sleep:a", "w2", T + 1, lease_seconds=60)
    assert storage.leases.claim("sleep:b", "w2", T + 1, lease_seconds=60)
    [a, b] = storage.leases.list("sleep:")
    assert (a.name, a.owner, a.expires_at, a.claimed_at, a.finished_at, a.claims) == (
        "sleep:a",
        "w1",
        T + 60,
        T,
        None,
        1,
    )
    assert (b.name, b.owner, b.claims) == ("sleep:b", "w2", 1)


def test_the_holder_renews_and_an_expired_claim_is_taken_over(storage):
    assert storage.leases.claim("job", "w1", T, lease_seconds=10)
    assert storage.leases.claim("job", "w1", T + 5, lease_seconds=10)  # its own: renewed
    assert storage.leases.renew("job", "w1", T + 9, lease_seconds=10)
    assert not storage.leases.claim("job", "w2", T + 18.5, lease_seconds=10)  # until T + 19
    assert storage.leases.claim("job", "w2", T + 19, lease_seconds=10)  # expired: taken over
    assert not storage.leases.renew("job", "w1", T + 19.5, lease_seconds=10)
    storage.leases.release("job", "w1", T + 20, finished=True)  # not its claim: no effect
    [lease] = storage.leases.list()
    assert (lease.owner, lease.expires_at, lease.finished_at, lease.claims) == (
        "w2",
        T + 29,
        None,
        3,
    )


def test_an_expired_claim_nobody_took_stays_renewable(storage):
    assert storage.leases.claim("job", "w1", T, lease_seconds=10)
    assert storage.leases.renew("job", "w1", T + 30, lease_seconds=10)
    assert not storage.leases.claim("job", "w2", T + 31, lease_seconds=10)


def test_release_frees_the_lease_and_records_finished_work(storage):
    assert storage.leases.claim("job", "w1", T, lease_seconds=60)
    storage.leases.release("job", "w1", T + 5, finished=False)
    [lease] = storage.leases.list()
    assert (lease.owner, lease.finished_at) == (None, None)
    assert storage.leases.claim("job", "w2", T + 6, lease_seconds=60)
    storage.leases.release("job", "w2", T + 8, finished=True)
    [lease] = storage.leases.list()
    assert (lease.owner, lease.finished_at, lease.claims) == (None, T + 8, 2)
    # Finished after the round began: not to be done again in that round.
    assert not storage.leases.claim("job", "w1", T + 9, lease_seconds=60, finished_before=T + 7)
    assert storage.leases.claim("job", "w1", T + 9, lease_seconds=60, finished_before=T + 8)
    assert not storage.leases.renew("job", "w2", T + 10, lease_seconds=60)


def test_list_filters_by_prefix_in_name_order(storage):
    for name in ("b:2", "a:1", "b:1", "bb"):
        assert storage.leases.claim(name, "w", T, lease_seconds=1)
    assert [lease.name for lease in storage.leases.list("b:")] == ["b:1", "b:2"]
    assert [lease.name for lease in storage.leases.list()] == ["a:1", "b:1", "b:2", "bb"]
    assert storage.leases.list("zz") == []


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.leases.claim("", "w", T, lease_seconds=1),
        lambda s: s.leases.claim("job", "", T, lease_seconds=1),
        lambda s: s.leases.claim("job", "w", math.nan, lease_seconds=1),
        lambda s: s.leases.claim("job", "w", T, lease_seconds=0),
        lambda s: s.leases.claim("job", "w", T, lease_seconds=math.inf),
        lambda s: s.leases.claim("job", "w", T, lease_seconds=1, finished_before=math.nan),
        lambda s: s.leases.renew("job", "w", T, lease_seconds=-1),
        lambda s: s.leases.release("job", "w", math.inf, finished=True),
    ],
)
def test_bad_terms_are_refused_and_write_nothing(storage, call):
    with pytest.raises(ValidationError):
        call(storage)
    assert storage.leases.list() == []


def test_leases_outlive_a_reopen(backend):
    first = backend.open()
    assert first.leases.claim("job", "w1", T, lease_seconds=60)
    first.close()
    again = backend.open()
    assert not again.leases.claim("job", "w2", T + 1, lease_seconds=60)
    assert [lease.owner for lease in again.leases.list()] == ["w1"]


def test_concurrent_claims_through_two_connections_grant_each_lease_once(backend):
    """Two openers of one database (as two processes would be), four threads each,
    all claiming the same leases at the same moments: one claim wins per lease."""
    stores = [backend.open(), backend.open()]
    names = [f"scope:{i}" for i in range(12)]
    claimants = 8
    barrier = threading.Barrier(claimants)

    def claimant(number: int) -> list[str]:
        storage = stores[number % 2]
        won = []
        for name in names:
            barrier.wait()
            if storage.leases.claim(name, f"w{number}", T, lease_seconds=60):
                won.append(name)
        return won

    with ThreadPoolExecutor(claimants) as pool:
        results = list(pool.map(claimant, range(claimants)))
    winners = sorted(name for won in results for name in won)
    assert winners == sorted(names)
    leases = stores[0].leases.list("scope:")
    assert [lease.claims for lease in leases] == [1] * len(names)
