"""The UCMA service (``ucma[server]``): REST under /v1, MCP at /mcp, OpenAPI at /docs."""

from ucma.server.app import ServiceConfig, create_app

__all__ = ["ServiceConfig", "create_app"]
