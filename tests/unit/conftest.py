"""Fixtures shared by the unit tests."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Run ``@pytest.mark.anyio`` tests on asyncio only: the engine targets asyncio."""
    return "asyncio"
