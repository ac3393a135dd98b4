"""AsyncMemory: the memory controller, the one place that wires UCMA together.

Seed 001's controller API (observe, remember, learn, new_session, stats) plus
the typed writes and reads a user needs (assert_fact, facts_about,
add_procedure, record_procedure_outcome, find_procedures, get, list, delete,
export and import), seed 002's conflict resolution (assert_fact_detailed,
conflicts, resolve_conflict, sources of truth, answer; logic in
``ucma.conflicts``), seed 004's cascading recall (``ucma.retrieval``), seed
003's learning loop (decide, outcome, events; ``ucma.learning``), and the
lifecycle (sleep, forget, run_gardener, history; ``ucma.lifecycle``).
``ucma.sync.Memory`` wraps every method one-to-one. Every notion of "now"
comes from ``self.clock``.

Threading model and atomic writes: ``ucma.engine.base``.

Scope: every method takes ``user_id`` / ``agent_id``; the values given when
the memory was opened are the defaults. A call with no user_id at all raises
``ScopeError``.

Familiar calls: ``add``, ``search``, ``get_all``, ``update`` and ``delete_all``, beside
``get``, ``delete`` and ``history``, are the names users know from other memory libraries
over the same implementation (ucma.engine.conventions).

Goals (seed 000's predictive paradigm): ``add_goal``, ``decompose_goal``,
``update_progress``, ``get_active_goals``, ``anticipate``, ``pursue_goal`` and the rest in
ucma.engine.goals.

Synthesis (seed 000's response synthesis and post-interaction learning): ``synthesize``
reads every paradigm for one query with the conflict matrix applied
(ucma.engine.synthesis); ``post_interaction`` learns from one interaction in every
paradigm in one transaction (ucma.engine.interactions).

Erasure: ``forget_person`` and ``forget_scope`` erase for good (ucma.engine.erasure);
``backup`` copies the whole store online.

Administration: ``create_key``, ``list_keys``, ``count_keys``, ``revoke_key``,
``authenticate`` and ``scopes`` are not scoped. They manage the API keys of the service
(``ucma keys``, ``ucma.server.auth``) and list the scopes a database holds (the local-mode
inspector page); the server and CLI reach the key store only through them.
"""

from __future__ import annotations

from ucma.engine.administration import Administration
from ucma.engine.conventions import Conventions
from ucma.engine.episodes import EpisodeWrites
from ucma.engine.erasure import Erasure
from ucma.engine.goals import Goals
from ucma.engine.interactions import Interactions
from ucma.engine.knowledge import KnowledgeWrites
from ucma.engine.learning import LearningLoop
from ucma.engine.lifecycle import Lifecycle
from ucma.engine.opinions import Opinions
from ucma.engine.predictive import Predictive
from ucma.engine.privacy import PrivacyGuard
from ucma.engine.queries import Queries
from ucma.engine.retrieval import Retrieval
from ucma.engine.strategies import Strategies
from ucma.engine.synthesis import Synthesizer

__all__ = ["AsyncMemory"]


class AsyncMemory(
    Interactions,
    Synthesizer,
    Goals,
    Predictive,
    Strategies,
    Opinions,
    EpisodeWrites,
    Conventions,
    KnowledgeWrites,
    Retrieval,
    Queries,
    LearningLoop,
    Lifecycle,
    Administration,
    Erasure,
    PrivacyGuard,
):
    """Long-term memory in one database; async, safe to share between tasks.

    ``AsyncMemory(database)`` takes a file path (a SQLite file, made on first use with
    its folder), ``sqlite:///<path>`` or a database URL such as ``postgresql://...``
    (``ucma.storage.location``); an unknown scheme is a ``ConfigError`` at once.

    One class over the engine's parts (each a mixin over ``EngineBase``, in its own
    module of this package), so callers see one object with every method.
    """
