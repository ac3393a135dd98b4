"""Memory: the synchronous facade over AsyncMemory.

Every method is a one-line wrapper made by ``_blocking``: it runs the async
method on an event loop in a private background thread (an anyio blocking
portal), so ``Memory`` works from plain scripts, threads, and even from code
that already runs inside another event loop. Signatures and docs are the
async ones.
"""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

from ucma.conflicts.sources import SourceOfTruth
from ucma.engine import AsyncMemory
from ucma.memory.working import WorkingMemory

__all__ = ["Memory"]

P = ParamSpec("P")
R = TypeVar("R")


def _blocking(
    method: Callable[Concatenate[AsyncMemory, P], Awaitable[R]],
) -> Callable[Concatenate[Memory, P], R]:
    @functools.wraps(method)
    def wrapper(self: Memory, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._portal.call(functools.partial(method, self._async, *args, **kwargs))

    return wrapper


def _shutdown(portal_cm: Any, portal: BlockingPortal, memory: AsyncMemory) -> None:
    try:
        portal.call(memory.close)
    finally:
        portal_cm.__exit__(None, None, None)


class Memory:
    """Long-term memory in one database, with blocking methods.

    ``Memory(database, user_id="alice")`` opens (or creates) the store a file path or
    URL names (``AsyncMemory``) and returns a ready memory; the keyword arguments
    are ``AsyncMemory``'s. Use it as a context manager or call ``close()``.
    """

    def __init__(self, database: str | os.PathLike[str], **kwargs: Any) -> None:
        portal_cm = start_blocking_portal(backend="asyncio")
        self._portal = portal_cm.__enter__()
        try:
            self._async = self._portal.call(functools.partial(_opened, database, kwargs))
        except BaseException:
            portal_cm.__exit__(None, None, None)
            raise
        self._finalizer = weakref.finalize(self, _shutdown, portal_cm, self._portal, self._async)

    def close(self) -> None:
        """Close the database and stop the background event loop (idempotent)."""
        self._finalizer()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def engine(self) -> AsyncMemory:
        """The underlying AsyncMemory (for code that mixes both styles)."""
        return self._async

    def working_memory(self, **scope: Any) -> WorkingMemory:
        return self._async.working_memory(**scope)

    def context(self, **scope: Any) -> str:
        """The scope's working memory rendered as LLM context, current material only
        (``AsyncMemory.context``): the name to use from synchronous code."""
        return self._async.context(**scope)

    def session_id(self, **scope: Any) -> str:
        return self._async.session_id(**scope)

    def process_stats(self) -> dict[str, Any]:
        return self._async.process_stats()

    def add_source_of_truth(self, source: SourceOfTruth) -> None:
        self._async.add_source_of_truth(source)

    def export_lines(self, **scope: Any) -> Iterator[str]:
        """The scope's export line by line, read a page at a time (see AsyncMemory)."""
        lines = self._async.export_lines(**scope)
        try:
            while True:
                try:
                    yield self._portal.call(lines.__anext__)
                except StopAsyncIteration:
                    return
        finally:
            self._portal.call(lines.aclose)

    def interrupt_consolidation(self) -> None:
        """Ask a running sleep cycle to stop after its current phase."""
        self._portal.call(self._async.interrupt_consolidation)

    @property
    def clock(self) -> Any:
        """The engine's clock (``ucma.lifecycle.clock``)."""
        return self._async.clock

    @property
    def consolidation_task(self) -> Any:
        return self._async.consolidation_task

    add = _blocking(AsyncMemory.add)
    search = _blocking(AsyncMemory.search)
    get_all = _blocking(AsyncMemory.get_all)
    update = _blocking(AsyncMemory.update)
    delete_all = _blocking(AsyncMemory.delete_all)
    observe = _blocking(AsyncMemory.observe)
    observe_many = _blocking(AsyncMemory.observe_many)
    remember = _blocking(AsyncMemory.remember)
    recall = _blocking(AsyncMemory.recall)
    learn = _blocking(AsyncMemory.learn)
    assert_fact = _blocking(AsyncMemory.assert_fact)
    assert_fact_detailed = _blocking(AsyncMemory.assert_fact_detailed)
    resolve_conflict = _blocking(AsyncMemory.resolve_conflict)
    conflicts = _blocking(AsyncMemory.conflicts)
    review_flags = _blocking(AsyncMemory.review_flags)
    clear_review = _blocking(AsyncMemory.clear_review)
    answer = _blocking(AsyncMemory.answer)
    # The same text as ``context()``, read on the memory's event loop; kept so the
    # facade has every AsyncMemory method (code moving between styles keeps working).
    current_context = _blocking(AsyncMemory.current_context)
    facts_about = _blocking(AsyncMemory.facts_about)
    fact_history = _blocking(AsyncMemory.fact_history)
    traverse = _blocking(AsyncMemory.traverse)
    add_procedure = _blocking(AsyncMemory.add_procedure)
    record_procedure_outcome = _blocking(AsyncMemory.record_procedure_outcome)
    find_procedures = _blocking(AsyncMemory.find_procedures)
    learn_from_trajectory = _blocking(AsyncMemory.learn_from_trajectory)
    strategies_for = _blocking(AsyncMemory.strategies_for)
    has_strategy_for = _blocking(AsyncMemory.has_strategy_for)
    validate_learning = _blocking(AsyncMemory.validate_learning)
    find_learnings = _blocking(AsyncMemory.find_learnings)
    episodes_between = _blocking(AsyncMemory.episodes_between)
    related = _blocking(AsyncMemory.related)
    links = _blocking(AsyncMemory.links)
    link = _blocking(AsyncMemory.link)
    update_graph_importance = _blocking(AsyncMemory.update_graph_importance)
    new_session = _blocking(AsyncMemory.new_session)
    get = _blocking(AsyncMemory.get)
    list = _blocking(AsyncMemory.list)
    delete = _blocking(AsyncMemory.delete)
    stats = _blocking(AsyncMemory.stats)
    prepare_search = _blocking(AsyncMemory.prepare_search)
    prepare_large_scopes = _blocking(AsyncMemory.prepare_large_scopes)
    export_jsonl = _blocking(AsyncMemory.export_jsonl)
    import_jsonl = _blocking(AsyncMemory.import_jsonl)
    decide = _blocking(AsyncMemory.decide)
    outcome = _blocking(AsyncMemory.outcome)
    trace = _blocking(AsyncMemory.trace)
    traces = _blocking(AsyncMemory.traces)
    salience_history = _blocking(AsyncMemory.salience_history)
    events = _blocking(AsyncMemory.events)
    replay = _blocking(AsyncMemory.replay)
    memory_influence = _blocking(AsyncMemory.memory_influence)
    counterfactuals = _blocking(AsyncMemory.counterfactuals)
    extract_patterns = _blocking(AsyncMemory.extract_patterns)
    share_patterns = _blocking(AsyncMemory.share_patterns)
    event_backlog = _blocking(AsyncMemory.event_backlog)
    publish_events = _blocking(AsyncMemory.publish_events)
    acknowledge_events = _blocking(AsyncMemory.acknowledge_events)
    import_lines = _blocking(AsyncMemory.import_lines)
    create_key = _blocking(AsyncMemory.create_key)
    list_keys = _blocking(AsyncMemory.list_keys)
    count_keys = _blocking(AsyncMemory.count_keys)
    revoke_key = _blocking(AsyncMemory.revoke_key)
    authenticate = _blocking(AsyncMemory.authenticate)
    scopes = _blocking(AsyncMemory.scopes)
    sleep = _blocking(AsyncMemory.sleep)
    sleep_all = _blocking(AsyncMemory.sleep_all)
    sleep_runs = _blocking(AsyncMemory.sleep_runs)
    forget = _blocking(AsyncMemory.forget)
    run_gardener = _blocking(AsyncMemory.run_gardener)
    gardener_schedule = _blocking(AsyncMemory.gardener_schedule)
    history = _blocking(AsyncMemory.history)
    archive = _blocking(AsyncMemory.archive)
    unarchive = _blocking(AsyncMemory.unarchive)
    sources = _blocking(AsyncMemory.sources)
    duplicates = _blocking(AsyncMemory.duplicates)
    retention = _blocking(AsyncMemory.retention)
    retention_curve = _blocking(AsyncMemory.retention_curve)
    reveal = _blocking(AsyncMemory.reveal)
    detokenise = _blocking(AsyncMemory.detokenise)
    forget_person = _blocking(AsyncMemory.forget_person)
    forget_scope = _blocking(AsyncMemory.forget_scope)
    backup = _blocking(AsyncMemory.backup)
    retain = _blocking(AsyncMemory.retain)
    find_opinion = _blocking(AsyncMemory.find_opinion)
    reinforce_opinion = _blocking(AsyncMemory.reinforce_opinion)
    weaken_opinion = _blocking(AsyncMemory.weaken_opinion)
    opinions_below = _blocking(AsyncMemory.opinions_below)
    opinions = _blocking(AsyncMemory.opinions)
    get_opinion = _blocking(AsyncMemory.get_opinion)
    opinion_history = _blocking(AsyncMemory.opinion_history)
    observe_transition = _blocking(AsyncMemory.observe_transition)
    transitions = _blocking(AsyncMemory.transitions)
    simulate = _blocking(AsyncMemory.simulate)
    record_competence = _blocking(AsyncMemory.record_competence)
    competences = _blocking(AsyncMemory.competences)
    introspect = _blocking(AsyncMemory.introspect)
    should_attempt = _blocking(AsyncMemory.should_attempt)
    learning_priorities = _blocking(AsyncMemory.learning_priorities)
    add_goal = _blocking(AsyncMemory.add_goal)
    get_goal = _blocking(AsyncMemory.get_goal)
    goals = _blocking(AsyncMemory.goals)
    get_active_goals = _blocking(AsyncMemory.get_active_goals)
    decompose_goal = _blocking(AsyncMemory.decompose_goal)
    update_progress = _blocking(AsyncMemory.update_progress)
    resume_goal = _blocking(AsyncMemory.resume_goal)
    abandon_goal = _blocking(AsyncMemory.abandon_goal)
    anticipate = _blocking(AsyncMemory.anticipate)
    pursue_goal = _blocking(AsyncMemory.pursue_goal)
    synthesize = _blocking(AsyncMemory.synthesize)
    post_interaction = _blocking(AsyncMemory.post_interaction)


async def _opened(database: str | os.PathLike[str], kwargs: dict[str, Any]) -> AsyncMemory:
    return await AsyncMemory(database, **kwargs).open()
