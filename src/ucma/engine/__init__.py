"""The engine: ``AsyncMemory`` (ucma.engine.memory) and the parts it is made of.

base.py            EngineBase: construction, open/close, the storage threads, scopes
episodes.py        observe, observe_many, sessions, delete
knowledge.py       learn, facts and conflicts, sources of truth, procedures, links
retrieval.py       remember, recall, prepare_search
conventions.py     add, search, get_all, update, delete_all: the calls users know
queries.py         every other read: get, list, facts_about, answer, related, stats ...
learning.py        the outcome learning loop: decide, outcome, traces, events
predictive.py      world model, self-model, should_attempt, learning_priorities
goals.py           goals: add, decompose, progress, anticipate, pursue
synthesis.py       synthesize: every paradigm for one query, the conflict matrix, caches
interactions.py    post_interaction: learning from one interaction in one transaction
lifecycle.py       sleep, forget, the gardener, history and retention
administration.py  export / import, API keys, scopes
privacy.py         the content guard: tokens and the vault, refusals, reveal
erasure.py         forget a person or a scope for good; the online backup
"""

from ucma.engine.memory import AsyncMemory

__all__ = ["AsyncMemory"]
