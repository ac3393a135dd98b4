"""bench/service_load.py's figures: what counts as an error, percentiles, medians of runs."""

from __future__ import annotations

import pytest
from tests.bench_modules import load_bench

service_load = load_bench("service_load")


def test_a_window_counts_answers_errors_cpu_and_memory() -> None:
    Sample = service_load.Sample
    ok = -1  # the status a sample keeps when the answer was the expected one
    samples = [Sample("observe", 0.010 * (i + 1), ok) for i in range(10)]
    samples += [Sample("recall", 0.100, ok) for _ in range(9)]
    samples += [Sample("recall", 5.0, 503), Sample("observe", 1.0, 0)]

    figures = service_load.summarise(samples, 2.0, (1.5, 0.5), [300.0, 310.0, 312.0], [1.0, 2.0])

    assert figures["requests"] == 21
    assert figures["requests_per_s"] == 9.5  # 19 answered in 2 s; errors do not count
    assert figures["errors"] == 2 and figures["errors_by_status"] == {"503": 1, "0": 1}
    assert figures["operations"]["observe"]["requests_per_s"] == 5.0
    assert figures["operations"]["observe"]["latency_ms"]["p50"] == pytest.approx(50.0)
    assert figures["operations"]["recall"]["latency_ms"]["p99"] == pytest.approx(100.0)
    assert figures["server_cpu_cores"] == 0.75 and figures["client_cpu_cores"] == 0.25
    assert figures["server_cpu_ms_per_request"] == pytest.approx(1000 * 1.5 / 21, abs=0.1)
    assert figures["rss_growth_mb"] == 12.0
    assert "database_cpu_cores" not in figures  # SQLite: the database is the server process
    assert figures["total_cpu_ms_per_request"] == figures["server_cpu_ms_per_request"]
    on_postgres = service_load.summarise(samples, 2.0, (1.5, 0.5), [1.0] * 3, [1.0] * 2, 0.5)
    assert on_postgres["database_cpu_cores"] == 0.25
    assert on_postgres["total_cpu_ms_per_request"] == pytest.approx(1000 * 2.0 / 21, abs=0.1)


def test_the_summary_of_runs_is_the_median_of_each_figure() -> None:
    runs = [
        {"embedder_per_s": 100.0, "samples": [1.0], "clients": {"8": {"requests_per_s": 40.0}}},
        {"embedder_per_s": 300.0, "samples": [2.0], "clients": {"8": {"requests_per_s": 60.0}}},
        {"embedder_per_s": 200.0, "samples": [3.0], "clients": {"8": {"requests_per_s": 90.0}}},
    ]

    assert service_load.median_figures(runs) == {
        "clients": {"8": {"requests_per_s": 60.0}},
        "embedder_per_s": 200.0,
        "samples": [[1.0], [2.0], [3.0]],
    }


def test_bad_settings_are_refused() -> None:
    with pytest.raises(SystemExit):
        service_load.parse_args(["--clients", "1"])
    with pytest.raises(SystemExit):
        service_load.parse_args(["--seconds", "0"])
    assert service_load.parse_args(["--clients", "8,32"]).clients == [8, 32]


def test_postgres_settings_and_setups() -> None:
    with pytest.raises(SystemExit):
        service_load.parse_args(["--database", "sqlite:///x.db"])
    with pytest.raises(SystemExit):
        service_load.parse_args(["--compare-sqlite"])  # nothing to compare with
    with pytest.raises(SystemExit):
        service_load.parse_args(["--processes", "0"])
    args = service_load.parse_args(
        ["--database", "postgresql://u@127.0.0.1:5/db", "--processes", "4", "--compare-sqlite"]
    )
    assert [setup.name for setup in service_load.setups_of(args)] == [
        "sqlite, 1 process",
        "postgresql, 4 processes",
    ]
    assert [s.name for s in service_load.setups_of(service_load.parse_args([]))] == [
        "sqlite, 1 process"
    ]


def test_ratios_are_per_run_then_the_median() -> None:
    def run(rate: float, p95: float) -> dict[str, object]:
        latency = {"p50": p95 / 2, "p95": p95, "p99": p95 * 2}
        figures = {
            "requests_per_s": rate,
            "server_cpu_ms_per_request": 10.0,
            "total_cpu_ms_per_request": 10.0,
            "latency_ms": latency,
        }
        return {"clients": {"8": figures}}

    setups = {
        "one": {"runs": [run(40.0, 100.0), run(50.0, 100.0), run(60.0, 100.0)]},
        "four": {"runs": [run(120.0, 50.0), run(100.0, 50.0), run(90.0, 100.0)]},
    }
    [figures] = service_load.ratios(setups, "one", "four").values()
    # Per run 3.0, 2.0 and 1.5: the median ratio, not the ratio of the medians (100 / 50).
    assert figures["requests_per_s"] == 2.0
    assert figures["latency_p95"] == 0.5 and figures["server_cpu_ms_per_request"] == 1.0
