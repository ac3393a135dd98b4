"""UCMA as an MCP server for agents (official MCP Python SDK, ``ucma[mcp]``).

``create_mcp_server`` builds the tools over an engine; ``ucma mcp`` serves them over stdio
with a scope from its command-line options, and ``ucma serve`` mounts them at ``/mcp``
(streamable HTTP) with the scope of the caller's API key.
"""

from ucma.mcp.server import TOOL_NAMES, ScopeResolver, create_mcp_server, fixed_scope

__all__ = ["TOOL_NAMES", "ScopeResolver", "create_mcp_server", "fixed_scope"]
