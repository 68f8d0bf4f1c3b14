"""Reduce Hindsight's OpenAPI document to the routes the provider calls.

Usage: python trim_openapi.py FULL.json OUT.json

Keeps ``openapi``, ``info`` and the listed paths verbatim, plus every component schema they
reference (transitively); nothing inside a kept object is changed. Building an openapi-core
validator for the full 380 KB document takes seconds per test; the trimmed one is instant.
"""

from __future__ import annotations

from hermes_core.testing.openapi_trim import main

PATHS = {
    "/v1/default/banks/{bank_id}": ["put"],
    "/v1/default/banks/{bank_id}/memories": ["post"],
    "/v1/default/banks/{bank_id}/memories/recall": ["post"],
    "/v1/default/banks/{bank_id}/reflect": ["post"],
    "/v1/default/banks/{bank_id}/documents/{document_id}": ["delete"],
}

if __name__ == "__main__":
    main(PATHS)
