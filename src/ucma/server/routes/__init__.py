"""The ``/v1`` routes, one module per resource; ``ROUTERS`` is what the app includes.

Adding an engine operation is one module with an ``APIRouter`` named ``router`` and one
line here. Every route resolves its scope with ``scope_for(caller, user_id, agent_id)``
and then calls one engine method: no route reaches below the engine.
"""

from fastapi import APIRouter

from ucma.server.routes import (
    chat,
    conflicts,
    conventions,
    decisions,
    erasure,
    events,
    exchange,
    facts,
    goals,
    graph,
    learnings,
    lifecycle,
    memories,
    opinions,
    predictive,
    privacy,
    procedures,
    recall,
    service,
    sessions,
    strategies,
    synthesis,
)

__all__ = ["ROUTERS"]

ROUTERS: tuple[APIRouter, ...] = (
    service.router,
    memories.router,
    conventions.router,
    recall.router,
    facts.router,
    conflicts.router,
    chat.router,
    decisions.router,
    events.router,
    procedures.router,
    strategies.router,
    learnings.router,
    opinions.router,
    predictive.router,
    goals.router,
    synthesis.router,
    graph.router,
    sessions.router,
    lifecycle.router,
    exchange.router,
    privacy.router,
    erasure.router,
)
