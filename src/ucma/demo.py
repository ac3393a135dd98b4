"""Seed 001's two-session example (chapter 24, ``run_example``) on the real engine.

Session 1: Michael builds JWT authentication in FastAPI, hits tokens expiring after five
minutes instead of thirty, and fixes it with a leeway for clock skew; the agent stores that
lesson as a failure-analysis learning backed by the three observations. Session 2: Michael
comes back to add refresh tokens, and the agent remembers the earlier trouble.

Fully offline with the engine's default (packaged) embedder. ``ucma demo`` runs it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ucma.types import Hit, LearningType

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = [
    "APPLICABILITY",
    "CLOCK_SKEW_LEARNING",
    "DEMO_AGENT",
    "DEMO_QUERY",
    "DEMO_USER",
    "SESSION_1",
    "SESSION_2",
    "run_demo",
]

logger = logging.getLogger(__name__)

DEMO_USER = "michael"
DEMO_AGENT = "coding-assistant-001"

#: Session 1's observations as (content, source), in order.
SESSION_1: tuple[tuple[str, str], ...] = (
    ("Michael is building a FastAPI application with JWT authentication.", "user"),
    (
        "The JWT token expiry is set to 30 minutes but users are being "
        "logged out after only 5 minutes. Suspected clock skew issue.",
        "user",
    ),
    (
        "Fixed: added a 60-second leeway to the JWT decode call to "
        "handle clock skew between servers. Issue resolved.",
        "tool_result",
    ),
)

CLOCK_SKEW_LEARNING = (
    "When JWT tokens expire unexpectedly, check for clock skew "
    "between the issuing server and the validating server. "
    "Adding a leeway parameter to jwt.decode() resolves most cases."
)
APPLICABILITY = ("jwt", "authentication", "fastapi", "debugging")

SESSION_2 = (
    "Michael is back. He wants to add refresh token support to his FastAPI JWT implementation."
)
DEMO_QUERY = "JWT authentication FastAPI token issues"


async def run_demo(
    memory: AsyncMemory, *, user_id: str = DEMO_USER, agent_id: str = DEMO_AGENT
) -> list[Hit]:
    """Play both sessions into ``memory`` (already open) and return what session 2 recalls.

    Everything is written in the scope ``user_id`` / ``agent_id`` (Michael and the seed's
    coding assistant by default), so the demo never mixes with another user's memory. Returns
    the top five hits for ``DEMO_QUERY``, best first.
    """
    scope = {"user_id": user_id, "agent_id": agent_id}
    observations = [
        await memory.observe(content, source=source, **scope) for content, source in SESSION_1
    ]
    learning = await memory.learn(
        CLOCK_SKEW_LEARNING,
        learning_type=LearningType.FAILURE_ANALYSIS,
        evidence_ids=[observation.id for observation in observations],
        applicability=list(APPLICABILITY),
        confidence=0.85,
        impact_score=0.80,
        **scope,
    )
    logger.info("demo session 1 stored learning %s", learning.id)

    await memory.new_session(**scope)
    # Session 1 is consolidated in the background; session 2 starts from its result.
    consolidation = memory.consolidation_task
    if consolidation is not None:
        await consolidation
    await memory.observe(SESSION_2, source="user", **scope)
    return await memory.remember(DEMO_QUERY, limit=5, **scope)
