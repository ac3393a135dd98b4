"""Routing cost by the number of known names: ``route()`` p50 / p95 per size.

A scope's known names (the people its episodes involve) are handed to the
router with every query. Generated names (first name, optionally a middle
initial or a second first name, last name; plus bare first names) fill lists
of 10 to 100,000; every list starts with the same few names the queries
mention, so each size does the same matching work and only the number of
names it must not look at grows.

Per size it reports:

- ``build_ms``: the first ``route()`` with a new list (the name index is built);
- ``equal_list_ms``: the first ``route()`` with a new list equal to the cached
  one (how the engine re-reads its names), which reuses the index;
- ``route_ms``: p50 / p95 / max over ``--rounds`` passes of the query set with
  the same list (the steady state of a scope's recalls).

Usage: ``python bench/router.py [--sizes 10 100 1000 10000 100000] [--rounds 200]
[--out bench/results/router.json]``. Target: p95 within 10% from 10 to 100,000
names, and under 1 ms.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from core import percentile  # noqa: E402
from ucma.retrieval.router import route  # noqa: E402

REFERENCE = 1_686_754_800.0  # 2023-06-14 15:00 UTC


def _words(block: str) -> list[str]:
    return block.split()


FIRST = _words("""
Aaliyah Aaron Abigail Adam Adrian Aisha Alan Albert Alejandro Alex Alice Alicia Amara
Amir Amy Ana Andre Andrea Angela Anna Anthony Antonio Ari Arjun Arthur Asha Astrid Ava Beatriz
Ben Bianca Boris Brian Bruno Camila Carlos Carmen Caroline Chen Chloe Chris Clara Daniel Dana
Danielle David Diego Dmitri Elena Eli Elif Elijah Emma Eric Esther Ethan Eva Fatima Felix Fiona
Francesca Gabriel Grace Hana Hannah Hassan Helen Hugo Ian Ines Isaac Isabel Ivan Jack Jade James
Jana Javier Jin Joao John Jonas Jordan Jose Julia Julian Kai Karen Kenji Laila Lars Laura Leah
Leo Liam Lina Lucas Lucia Luis Maria Mark Marta Mary Mateo Maya Mei Melanie Mia Michael Mohammed
Nadia Naomi Nina Noah Nora Olga Omar Oscar Paula Pedro Priya Rafael Ravi Rosa Ruth Sam Sara Sofia
Tariq Theo Tom Uma Valentina Victor Wendy Yara Yusuf Zara Zoe""")

LAST = _words("""
Abbott Adeyemi Ahmed Alvarez Andersen Bauer Becker Bennett Bianchi Brooks Campbell
Castillo Chang Chen Clarke Costa Cruz Dahl Diaz Dubois Edwards Eriksson Fischer Fleming Fontaine
Garcia Gomez Gonzalez Gupta Hall Hansen Harris Hoffmann Hughes Ito Jackson Jensen Johansson Kato
Kaur Keller Khan Kim Klein Kowalski Kumar Larsen Laurent Lee Lewis Lima Lopez Martin Mehta Meyer
Moreau Morris Muller Murphy Nakamura Nguyen Novak Okafor Olsen Ortiz Park Patel Perez Petrov
Popescu Quinn Ramos Reyes Rossi Russo Sato Schmidt Schneider Silva Singh Smith Suzuki Tanaka
Taylor Thomas Torres Turner Wagner Walker Wang Weber Whitfield Williams Wilson Wong Yamamoto Yilmaz
Young Zhang Ziegler""")

# Named in the queries below and at the head of every list.
MENTIONED = ["Caroline", "Melanie", "Dana Whitfield", "Dana", "Mary Ann Lopez", "Uma", "Liam"]

QUERIES = [
    "What did Caroline research?",
    "When did Melanie paint the sunrise over the lake?",
    "What food restrictions does Dana Whitfield have?",
    "Where does Dana live now?",
    "Did Mary Ann Lopez's sister call last week?",
    "Uma now works at Google as of 2026, right?",
    "When should I schedule a meeting with Liam?",
    "What is the relationship between Caroline and Melanie?",
    "Which theme does the user like?",
    "How do I deploy the fastapi service?",
    "Remind me about the dentist appointment tomorrow",
    "What do you know about me?",
]


def generated_names(count: int, seed: int = 7) -> list[str]:
    """``count`` distinct names: the mentioned ones, then realistic generated ones."""
    rng = random.Random(seed)
    names = dict.fromkeys(MENTIONED)
    while len(names) < count:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        shape = rng.random()
        if shape < 0.05:
            name = first
        elif shape < 0.75:
            name = f"{first} {last}"
        elif shape < 0.9:
            name = f"{first} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {last}"
        else:
            name = f"{first} {rng.choice(FIRST)} {last}-{rng.choice(LAST)}"
        names.setdefault(name, None)
    return list(names)[:count]


def _once(text: str, known: list[str]) -> float:
    start = time.perf_counter()
    route(text, reference_time=REFERENCE, known_entities=known)
    return (time.perf_counter() - start) * 1000.0


def measure(sizes: list[int], rounds: int) -> list[dict]:
    """One row per size. The sizes take turns within every round, so a busy
    moment on a shared machine falls on all of them alike."""
    lists = {size: generated_names(size) for size in sizes}
    builds = {size: _once(QUERIES[0], known) for size, known in lists.items()}
    equal = {size: _once(QUERIES[0], list(known)) for size, known in lists.items()}
    timings: dict[int, list[float]] = {size: [] for size in sizes}
    for _ in range(rounds):
        for size, known in lists.items():
            for text in QUERIES:
                timings[size].append(_once(text, known))
    return [
        {
            "names": size,
            "build_ms": round(builds[size], 3),
            "equal_list_ms": round(equal[size], 3),
            "route_ms": {
                "p50": round(percentile(timings[size], 0.5), 4),
                "p95": round(percentile(timings[size], 0.95), 4),
                "max": round(max(timings[size]), 4),
            },
            "queries": len(timings[size]),
            "entities_found": route(
                QUERIES[4], reference_time=REFERENCE, known_entities=lists[size]
            ).entities,
        }
        for size in sizes
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results/router.json")
    args = parser.parse_args()
    for text in QUERIES:  # warm the time parser and the classifier's expressions
        route(text, reference_time=REFERENCE)
    rows = measure(args.sizes, args.rounds)
    for row in rows:
        size, timing = row["names"], row["route_ms"]
        print(
            f"{size:>7} names  route p50 {timing['p50']:.3f} ms  p95 {timing['p95']:.3f} ms  "
            f"max {timing['max']:.3f} ms  build {row['build_ms']:.1f} ms  "
            f"equal list {row['equal_list_ms']:.2f} ms"
        )
    p95s = [row["route_ms"]["p95"] for row in rows]
    spread = max(p95s) / min(p95s) - 1.0
    print(f"p95 spread across sizes: {spread:.1%} (target within 10%, all under 1 ms)")
    result = {
        "benchmark": "router",
        "machine": platform.machine(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "rounds": args.rounds,
        "sizes": rows,
        "p95_spread": round(spread, 4),
        "p95_under_1ms": all(p < 1.0 for p in p95s),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
