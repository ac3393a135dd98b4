"""UCMA as a REST service (needs the ``server`` extra: ``pip install 'ucma[server]'``).

``create_app`` builds a FastAPI application over one :class:`ucma.engine.AsyncMemory`;
``ucma serve`` runs it with uvicorn. The layer calls the engine and nothing below it.
"""

from ucma.server.app import DEFAULT_MAX_BODY_BYTES, create_app

__all__ = ["DEFAULT_MAX_BODY_BYTES", "create_app"]
