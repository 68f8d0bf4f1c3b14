"""``hermes-memory ui``: the memory inspector, a local web app (starlette + uvicorn).

A sibling of ``agent/`` and ``mcp/``: it shows and changes a home only through the host, the
layers' public functions and the inspector operations (:mod:`hermes_core.inspector`), with the
same rules as the agent and the CLI. :mod:`.app` builds the application, :mod:`.guard` holds
the security rules (loopback Host check, access token, CSRF, read-only, one user per view),
:mod:`.html` renders inert HTML and inline SVG charts, :mod:`.pages` the pages and
:mod:`.serve` runs it. Everything it serves is inside the package (no CDN).
"""
