"""The world of bench/paradigms.py: task domains whose outcomes depend on hidden facts.

Seven domains, each a capability the agent may or may not have. A task is a short text
("Deploy build 3.1") and a context of two observable conditions ("target": "staging",
"day": "friday"); the agent chooses one of the domain's three actions, and the world
draws success with a probability that only this module knows: ``Domain.table`` maps
each context to the three actions' probabilities. The tables encode hidden facts the
agent has to learn from what it observes, for example:

- deploys: the staging server rejects pushed builds on Fridays (only the release bot
  gets through then); production takes blue-green switches only;
- api calls: bob's API needs a token refresh before any call; the invoices endpoint
  times out unless the results are paged through;
- backups: a busy database only survives an incremental backup; mysql full dumps fail;
- reports: the finance mail filter strips attachments; sales cannot open shared links;
- imports: a large file has to go in batches; json has to be converted first.

Five domains are inside the agent's competence (in every context some action succeeds
at least 80% of the time, but which one depends on the context) and two are outside it
(contract reviews, network repairs: no action succeeds more than 15% of the time).

The agent also finds notes in memory that others left (``NOTES``): some state a hidden
fact, some are wrong (``Note.true`` says which; the agent is never told).

What the agent reads: ``Task.text``, ``Task.context``, ``Domain.actions`` and, after
acting, whether it worked and the world's error message (a symptom, never the rule or
the fix). Nothing else here is visible to it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

Context = tuple[tuple[str, str], ...]  # the conditions in the domain's order


@dataclass(frozen=True)
class Domain:
    name: str  # the capability ("deploys")
    variables: tuple[tuple[str, tuple[str, ...]], ...]  # condition, its values
    actions: tuple[str, str, str]
    table: dict[tuple[str, ...], tuple[float, float, float]]  # values -> P(success) per action
    errors: tuple[str, str, str]  # the symptom each action's failure reports
    templates: tuple[str, ...]
    targets: tuple[str, ...]
    inside: bool  # inside the agent's competence

    def contexts(self) -> list[dict[str, str]]:
        names = [name for name, _ in self.variables]
        return [dict(zip(names, values, strict=True)) for values in self.table]

    def probability(self, action: str, context: dict[str, str]) -> float:
        """The true chance that ``action`` succeeds in ``context`` (hidden)."""
        values = tuple(context[name] for name, _ in self.variables)
        return self.table[values][self.actions.index(action)]

    def best(self, context: dict[str, str]) -> float:
        """The best action's true chance of success in ``context`` (hidden)."""
        values = tuple(context[name] for name, _ in self.variables)
        return max(self.table[values])


DOMAINS = (
    Domain(
        "deploys",
        (("target", ("staging", "production")), ("day", ("weekday", "friday"))),
        ("push the build", "run a blue-green switch", "hand the build to the release bot"),
        {
            ("staging", "weekday"): (0.9, 0.3, 0.5),
            ("staging", "friday"): (0.05, 0.3, 0.85),
            ("production", "weekday"): (0.2, 0.9, 0.5),
            ("production", "friday"): (0.2, 0.85, 0.6),
        },
        ("upload refused", "switch aborted halfway", "bot queue stalled"),
        ("Deploy build {t}", "Ship release {t}", "Roll out version {t}", "Put build {t} live"),
        ("2.4", "3.1", "3.7", "4.0", "5.2"),
        True,
    ),
    Domain(
        "api calls",
        (("user", ("alice", "bob")), ("endpoint", ("orders", "invoices"))),
        ("call the endpoint", "refresh the token, then call", "page through the results"),
        {
            ("alice", "orders"): (0.9, 0.6, 0.4),
            ("alice", "invoices"): (0.15, 0.1, 0.9),
            ("bob", "orders"): (0.05, 0.9, 0.1),
            ("bob", "invoices"): (0.05, 0.85, 0.1),
        },
        ("401 unauthorised", "connection reset", "gateway timeout"),
        ("Fetch the {t} records", "Pull the {t} list", "Sync the {t} data", "Read the {t} feed"),
        ("latest", "weekly", "monthly", "pending", "archived"),
        True,
    ),
    Domain(
        "backups",
        (("engine", ("postgres", "mysql")), ("load", ("idle", "busy"))),
        ("take a full dump", "stream an incremental backup", "snapshot the volume"),
        {
            ("postgres", "idle"): (0.9, 0.6, 0.5),
            ("postgres", "busy"): (0.35, 0.85, 0.3),
            ("mysql", "idle"): (0.1, 0.5, 0.9),
            ("mysql", "busy"): (0.05, 0.8, 0.55),
        },
        ("dump truncated", "stream dropped", "snapshot inconsistent"),
        (
            "Back up the {t} tables",
            "Save a copy of the {t} data",
            "Archive the {t} schema",
            "Protect the {t} rows",
        ),
        ("orders", "users", "ledger", "catalogue", "analytics"),
        True,
    ),
    Domain(
        "reports",
        (("audience", ("finance", "sales")), ("format", ("pdf", "spreadsheet"))),
        ("send the attachment", "share a link", "paste the table in the body"),
        {
            ("finance", "pdf"): (0.1, 0.9, 0.3),
            ("finance", "spreadsheet"): (0.1, 0.85, 0.5),
            ("sales", "pdf"): (0.9, 0.15, 0.4),
            ("sales", "spreadsheet"): (0.6, 0.1, 0.85),
        },
        ("message bounced", "nobody opened it", "layout garbled"),
        (
            "Send the {t} report",
            "Share the {t} figures",
            "Mail the {t} summary",
            "Circulate the {t} numbers",
        ),
        ("quarterly", "weekly", "churn", "pipeline", "budget"),
        True,
    ),
    Domain(
        "imports",
        (("source", ("csv", "json")), ("size", ("small", "large"))),
        ("load it in one go", "load it in batches", "convert it first"),
        {
            ("csv", "small"): (0.9, 0.7, 0.4),
            ("csv", "large"): (0.1, 0.9, 0.3),
            ("json", "small"): (0.2, 0.3, 0.9),
            ("json", "large"): (0.05, 0.6, 0.8),
        },
        ("out of memory", "rows skipped", "parser crashed"),
        ("Import the {t} file", "Load the {t} export", "Ingest the {t} dump", "Bring in {t} rows"),
        ("supplier", "survey", "sensor", "payroll", "inventory"),
        True,
    ),
    Domain(
        "contract reviews",
        (("jurisdiction", ("eu", "us")), ("kind", ("nda", "lease"))),
        ("compare with the template", "search past contracts", "summarise the clauses"),
        {
            ("eu", "nda"): (0.1, 0.05, 0.15),
            ("eu", "lease"): (0.05, 0.1, 0.1),
            ("us", "nda"): (0.15, 0.1, 0.05),
            ("us", "lease"): (0.1, 0.05, 0.1),
        },
        ("missed a binding clause", "cited a void precedent", "wrong governing law"),
        (
            "Review the {t} contract",
            "Check the {t} agreement",
            "Vet the {t} terms",
            "Approve the {t} deal",
        ),
        ("vendor", "landlord", "partner", "reseller", "consultant"),
        False,
    ),
    Domain(
        "network repairs",
        (("site", ("office", "warehouse")), ("fault", ("fibre", "switch"))),
        ("restart the router", "reset the switch", "reroute the traffic"),
        {
            ("office", "fibre"): (0.05, 0.1, 0.15),
            ("office", "switch"): (0.1, 0.15, 0.05),
            ("warehouse", "fibre"): (0.1, 0.05, 0.1),
            ("warehouse", "switch"): (0.05, 0.15, 0.1),
        },
        ("link still down", "loop detected", "packets lost"),
        (
            "Fix the {t} outage",
            "Repair the {t} link",
            "Restore the {t} line",
            "Mend the {t} uplink",
        ),
        ("morning", "overnight", "recurring", "partial", "total"),
        False,
    ),
)


@dataclass(frozen=True)
class Note:
    """Something another person wrote down, in memory before the first task."""

    text: str
    true: bool  # whether it agrees with the hidden table (never shown to the agent)


NOTES = (
    Note("Team wiki: 'hand the build to the release bot' works when day = friday.", True),
    Note("Team wiki: 'run a blue-green switch' works when target = production.", True),
    Note("Old runbook: 'push the build' works when target = production.", False),
    Note("Team wiki: 'refresh the token, then call' works when user = bob.", True),
    Note("Old runbook: 'call the endpoint' works when endpoint = invoices.", False),
    Note("Team wiki: 'stream an incremental backup' works when load = busy.", True),
    Note("Old runbook: 'take a full dump' works when engine = mysql.", False),
    Note("Team wiki: 'share a link' works when audience = finance.", True),
    Note("Old runbook: 'send the attachment' works when format = spreadsheet.", False),
    Note("Team wiki: 'load it in batches' works when size = large.", True),
    Note("Old runbook: 'load it in one go' works when source = json.", False),
    Note("Old runbook: 'compare with the template' works when kind = nda.", False),
    Note("Old runbook: 'restart the router' works when fault = fibre.", False),
)


@dataclass(frozen=True)
class Task:
    domain: Domain
    text: str
    context: dict[str, str]


class World:
    """Draws outcomes from the hidden tables; the only place they are read."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def attempt(self, task: Task, action: str) -> tuple[bool, str | None]:
        """Do ``action`` for ``task``: (succeeded, the error message when it did not)."""
        if action not in task.domain.actions:
            raise ValueError(f"{action!r} is not an action of {task.domain.name}")
        if self._rng.random() < task.domain.probability(action, task.context):
            return True, None
        return False, task.domain.errors[task.domain.actions.index(action)]


def make_tasks(count: int, seed: int) -> list[Task]:
    """``count`` tasks, domains and contexts drawn uniformly."""
    rng = random.Random(seed)
    tasks = []
    for _ in range(count):
        domain = rng.choice(DOMAINS)
        context = {name: rng.choice(values) for name, values in domain.variables}
        text = rng.choice(domain.templates).format(t=rng.choice(domain.targets))
        tasks.append(Task(domain, text, context))
    return tasks


def labelled_suite(seed: int, per_context: int = 2) -> list[tuple[Task, bool]]:
    """Tasks of every domain and context, each labelled with whether it is inside the
    agent's competence: whether some action succeeds at least half of the time."""
    rng = random.Random(seed)
    suite = []
    for domain in DOMAINS:
        for context in domain.contexts():
            for _ in range(per_context):
                text = rng.choice(domain.templates).format(t=rng.choice(domain.targets))
                suite.append((Task(domain, text, context), domain.best(context) >= 0.5))
    return suite
