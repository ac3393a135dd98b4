"""The UCMA service (``ucma[server]``): REST under /v1, MCP at /mcp, OpenAPI at /docs."""

from ucma.server.app import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_IMPORT_BYTES, create_app

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_IMPORT_BYTES", "create_app"]
