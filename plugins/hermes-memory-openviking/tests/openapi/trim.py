"""Cut the OpenViking server's /openapi.json down to the paths this provider uses.

Usage: python trim.py FULL.json openviking-0.5.2.openapi.json

The full document (139 paths) also lists WebDAV methods (MKCOL, MOVE, PROPFIND) that are not
OpenAPI and would fail validation; the trimmed one keeps the used paths verbatim and every
component schema they reference, transitively.
"""

from __future__ import annotations

from hermes_core.testing.openapi_trim import main

USED = {
    "/health": ["get"],
    "/api/v1/system/status": ["get"],
    "/api/v1/search/find": ["post"],
    "/api/v1/search/search": ["post"],
    "/api/v1/content/read": ["get"],
    "/api/v1/content/abstract": ["get"],
    "/api/v1/content/overview": ["get"],
    "/api/v1/content/write": ["post"],
    "/api/v1/fs/ls": ["get"],
    "/api/v1/fs/tree": ["get"],
    "/api/v1/fs/stat": ["get"],
    "/api/v1/fs": ["delete"],
    "/api/v1/sessions/{session_id}": ["get"],
    "/api/v1/sessions/{session_id}/messages/batch": ["post"],
    "/api/v1/sessions/{session_id}/commit": ["post"],
    "/api/v1/resources": ["post"],
}

if __name__ == "__main__":
    main(USED)
