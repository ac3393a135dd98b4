"""Banks and opinions (seed 000's declarative paradigm; logic in ``ucma.paradigms``):
``retain`` into a bank, and the opinions observed statements and callers form,
reinforce, weaken and replace."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ucma.config import OpinionConfig
from ucma.engine.base import _enum
from ucma.engine.episodes import EpisodeWrites
from ucma.engine.privacy import PrivacyGuard
from ucma.errors import NotFoundError, ValidationError
from ucma.paradigms.evidence import apply_evidence
from ucma.paradigms.opinions import opinion_key
from ucma.storage.base import Storage
from ucma.types import Bank, Observation, Opinion, OpinionEvidence, OpinionStatus, Scope
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_limit,
    check_offset,
    check_strings,
)

__all__ = ["Opinions"]

logger = logging.getLogger(__name__)

_CHAIN_LIMIT = 1000  # the longest history opinion_history walks


class Opinions(EpisodeWrites, PrivacyGuard):
    """retain, find_opinion, reinforce_opinion, weaken_opinion, opinions_below,
    opinions, get_opinion, opinion_history."""

    async def retain(
        self,
        text: str,
        *,
        bank: Bank | str,
        confidence: float | None = None,
        entities: Sequence[str] | None = None,
        mention_time: float | None = None,
        topic: str | None = None,
        source: str = "user",
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Observation:
        """Store ``text`` in ``bank`` (seed 000's ``retain``): world, experience,
        opinion or observation. ``confidence`` in [0, 1] is its starting salience
        (seed 003 R2's scale: 1.0 explicit, 0.8 strong, 0.6 inferred, 0.4 weak) and,
        in the opinion bank, the opinion's confidence (default 0.6, a reasonable
        inference on R2's scale, for both); ``entities``
        are who or what it involves (its participants), ``mention_time`` when it was
        said (default now). In the opinion bank it forms an opinion on ``topic``
        (default: read from the text), or reinforces or weakens the current opinion
        on that topic, by the evolution rule. Stored whatever its importance."""
        scope = self._scope(user_id, agent_id)
        chosen = _enum(Bank, bank, "bank")
        level = None if confidence is None else check_fraction(confidence, "confidence")
        salience = level if level is not None else self.config.opinions.initial_confidence
        names = check_strings(entities, "entities")
        item = {
            "content": text,
            "source": source,
            "timestamp": mention_time,
            "participants": [source, *(n for n in names if n != source)],
            "salience": max(salience, self.config.episodic.min_importance_to_store + 1e-6),
            "bank": chosen,
        }
        now = self._clock()
        prepared = self._prepare_observation(item, source, scope, now)
        if chosen is Bank.OPINION:
            about = None if topic is None else check_content(topic, self.config.limits, "topic")
            if about is not None:  # through the content guard, as the text is
                [about] = await self._guard(scope, [about], ["topic"])
            prepared.opinion = (about, level)
        elif topic is not None:
            raise ValidationError("topic is for the opinion bank; pass bank='opinion'")
        [observation] = await self._store_observations(scope, [prepared], now)
        logger.info("retain: %s into %s", observation.id, chosen.value)
        return observation

    async def find_opinion(
        self, topic: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Opinion | None:
        """The current opinion on ``topic``, or None: one whose topic is the same text
        (case and punctuation aside), else the one whose statement is closest in
        meaning (cosine at least ``OpinionConfig.min_topic_cosine``), searched in the
        vector index among the ``OpinionConfig.max_candidates`` memories nearest the
        topic, so only the topic is embedded however many opinions there are. A match
        on an opinion that was replaced answers with what replaced it, so "Alice's
        editor theme" finds the stance held now without naming ids."""
        scope = self._scope(user_id, agent_id)
        text = check_content(topic, self.config.limits, "topic")
        storage = await self._ready()
        exact = await self._run(storage.opinions.current, scope, topic_key=opinion_key(text))
        if exact:
            logger.info("find_opinion: %s by its topic", exact[0].id)
            return exact[0]
        [vector] = await self._embed_queries([text])
        found, cosine = await self._run(_closest, storage, scope, vector, self.config.opinions)
        logger.info("find_opinion: %s (cosine %.2f)", found.id if found else None, cosine)
        return found

    async def reinforce_opinion(
        self,
        opinion_id: str,
        *,
        evidence: str | None = None,
        weight: float | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Opinion:
        """Evidence for a current opinion: its confidence moves a share of the way to
        1 (``ucma.paradigms.opinions``). ``weight`` in (0, 1] defaults to the plain
        weight. Returns the opinion; NotFoundError if unknown, ValidationError if
        it was replaced (reinforce what replaced it)."""
        return await self._evidence(opinion_id, True, evidence, weight, None, user_id, agent_id)

    async def weaken_opinion(
        self,
        opinion_id: str,
        *,
        evidence: str | None = None,
        weight: float | None = None,
        stance: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Opinion:
        """Evidence against a current opinion: a share of its confidence goes. Below
        ``OpinionConfig.replace_below`` it is replaced by ``stance`` (history kept) and
        the replacement is returned; without a stance it stays current at its low
        confidence, for ``opinions_below`` to show."""
        return await self._evidence(opinion_id, False, evidence, weight, stance, user_id, agent_id)

    async def _evidence(
        self,
        opinion_id: str,
        supports: bool,
        evidence: str | None,
        weight: float | None,
        stance: str | None,
        user_id: str | None,
        agent_id: str | None,
    ) -> Opinion:
        scope = self._scope(user_id, agent_id)
        cfg = self.config.opinions
        key = check_id(opinion_id, "opinion_id")
        limits = self.config.limits
        text = check_content(evidence, limits, "evidence") if evidence is not None else ""
        new_stance = check_content(stance, limits, "stance") if stance is not None else None
        amount = cfg.plain_weight if weight is None else check_fraction(weight, "weight")
        if amount <= 0:
            raise ValidationError("weight must be above 0")
        said = [t for t in (text, new_stance) if t]
        if said:  # through the content guard, as every write's text
            guarded = iter(await self._guard(scope, said, ["evidence or stance"] * len(said)))
            text = next(guarded) if text else text
            new_stance = next(guarded) if new_stance else new_stance
        storage = await self._ready()
        now = self._clock()

        def write() -> Opinion:
            with storage.transaction():
                opinion = storage.opinions.get(scope, key)
                if opinion is None:
                    raise NotFoundError("opinion", key)
                if not opinion.is_current:
                    raise ValidationError(
                        f"opinion {key} was replaced by {opinion.replaced_by}; evidence goes "
                        "to the current opinion"
                    )
                entry = OpinionEvidence(text or "stated by the caller", supports, amount, now)
                return apply_evidence(
                    storage, scope, opinion, entry, cfg, now, new_stance=new_stance
                )

        result = await self._run(write)
        logger.info(
            "%s_opinion: %s -> %.3f", "reinforce" if supports else "weaken", key, result.confidence
        )
        return result

    async def opinions_below(
        self,
        confidence: float,
        *,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Opinion]:
        """Current opinions held with a confidence below ``confidence``: the weakly
        held beliefs to check or gather evidence for, newest change first."""
        scope = self._scope(user_id, agent_id)
        below = check_fraction(confidence, "confidence")
        count = check_limit(limit, 10_000)
        storage = await self._ready()
        found = await self._run(
            storage.opinions.list, scope, status=OpinionStatus.CURRENT, below=below, limit=count
        )
        logger.info("opinions_below %.2f: %d (user=%s)", below, len(found), scope.user_id)
        return found

    async def opinions(
        self,
        *,
        include_replaced: bool = False,
        limit: int = 100,
        offset: int = 0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Opinion]:
        """The scope's opinions, newest change first: the current ones, or with
        ``include_replaced`` their history too."""
        scope = self._scope(user_id, agent_id)
        count = check_limit(limit, 10_000)
        check_offset(offset)
        storage = await self._ready()
        status = None if include_replaced else OpinionStatus.CURRENT
        found = await self._run(
            storage.opinions.list, scope, status=status, limit=count, offset=offset
        )
        logger.info("opinions: %d (user=%s)", len(found), scope.user_id)
        return found

    async def get_opinion(
        self, opinion_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Opinion:
        """One opinion by id; NotFoundError if the scope has none with it."""
        scope = self._scope(user_id, agent_id)
        key = check_id(opinion_id, "opinion_id")
        storage = await self._ready()
        opinion = await self._run(storage.opinions.get, scope, key)
        if opinion is None:
            raise NotFoundError("opinion", key)
        logger.info("get_opinion: %s", key)
        return opinion

    async def opinion_history(
        self, opinion_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Opinion]:
        """The stances held on an opinion's topic, oldest first: every opinion it
        replaced, itself, and what replaced it, up to the current one."""
        scope = self._scope(user_id, agent_id)
        start = await self.get_opinion(opinion_id, user_id=scope.user_id, agent_id=scope.agent_id)
        storage = await self._ready()
        chain = await self._run(_chain, storage, scope, start)
        logger.info("opinion_history: %s, %d stances", start.id, len(chain))
        return chain


def _closest(
    storage: Storage, scope: Scope, vector: np.ndarray, config: OpinionConfig
) -> tuple[Opinion | None, float]:
    """The current opinion whose statement (a memory of the scope, archived or not) is
    nearest ``vector`` with at least ``config.min_topic_cosine``, and that cosine."""
    hits = storage.memories.vector_search(
        scope, vector, config.max_candidates, include_archived=True
    )
    hits = [(memory_id, cosine) for memory_id, cosine in hits if cosine >= config.min_topic_cosine]
    if not hits:
        return None, 0.0
    stating: dict[str, list[Opinion]] = {}
    for opinion in storage.opinions.list(
        scope, memory_ids=[memory_id for memory_id, _ in hits], limit=2**31
    ):
        stating.setdefault(opinion.memory_id or "", []).append(opinion)
    for memory_id, cosine in hits:  # best first
        for opinion in sorted(stating.get(memory_id, []), key=lambda o: not o.is_current):
            current = _current_of(storage, scope, opinion)
            if current is not None:
                return current, cosine
    return None, 0.0


def _current_of(storage: Storage, scope: Scope, opinion: Opinion) -> Opinion | None:
    """The current opinion an opinion's chain of replacements ends in."""
    seen = 0
    while not opinion.is_current and opinion.replaced_by and seen < _CHAIN_LIMIT:
        following = storage.opinions.get(scope, opinion.replaced_by)
        if following is None:
            return None
        opinion = following
        seen += 1
    return opinion if opinion.is_current else None


def _chain(storage: Storage, scope: Scope, opinion: Opinion) -> list[Opinion]:
    before: list[Opinion] = []
    current = opinion
    while current.replaces and len(before) < _CHAIN_LIMIT:
        previous = storage.opinions.get(scope, current.replaces)
        if previous is None:
            break
        before.append(previous)
        current = previous
    after: list[Opinion] = []
    current = opinion
    while current.replaced_by and len(after) < _CHAIN_LIMIT:
        following = storage.opinions.get(scope, current.replaced_by)
        if following is None:
            break
        after.append(following)
        current = following
    return [*reversed(before), opinion, *after]
