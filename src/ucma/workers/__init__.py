"""Processes that do a database's background work beside its service processes."""

from ucma.workers.worker import Worker, WorkerReport

__all__ = ["Worker", "WorkerReport"]
