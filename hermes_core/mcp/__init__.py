"""The MCP server: hermes-core's memory layers for any MCP client (Claude Desktop, Cursor,
Codex CLI, ...). A sibling of :mod:`hermes_core.agent`: it calls the Session API and never
reaches into a layer.

* :mod:`.service` — tools, resources and turns of one user's conversation (no SDK import)
* :mod:`.tokens` — bearer tokens of the HTTP transport, stored hashed (no SDK import)
* :mod:`.server` — the protocol adapter on ``mcp.server.lowlevel.Server``
* :mod:`.serve` — stdio and streamable-HTTP runners

Importing this package imports no part of the ``mcp`` SDK; :mod:`.server` and :mod:`.serve`
need the ``mcp`` extra (``pip install 'hermes-memory-core[mcp]'``). See docs/mcp.md.
"""
