"""Is an OpenAI-compatible endpoint up? One ``GET {base_url}/models`` (``hermes-memory chat``'s
first-run check).

Contract: :func:`probe_endpoint` never raises for the network: any HTTP answer counts as
reachable (with the model ids a 200 lists), a transport error or timeout as unreachable with
the reason in ``error``. The API key is sent as a bearer token and never appears in the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from pydantic import SecretStr

PROBE_TIMEOUT = 3.0
"""Seconds :func:`probe_endpoint` waits for an answer by default."""


@dataclass
class Probe:
    """What ``GET {base_url}/models`` told us."""

    reachable: bool
    models: list[str] = field(default_factory=list)
    error: str = ""
    status: int | None = None


def probe_endpoint(
    base_url: str, api_key: SecretStr | None, timeout: float = PROBE_TIMEOUT
) -> Probe:
    """Is the endpoint up? Any HTTP answer counts as reachable; only transport errors do not."""
    headers = {}
    secret = api_key.get_secret_value() if api_key is not None else ""
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    try:
        response = httpx.get(base_url.rstrip("/") + "/models", headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        return Probe(False, error=f"no answer within {timeout:g}s")
    except httpx.HTTPError as exc:
        return Probe(False, error=f"{type(exc).__name__}: {exc}")
    models: list[str] = []
    if response.status_code == 200:
        try:
            data = response.json().get("data") or []
            models = [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]
        except (ValueError, AttributeError):
            models = []
    return Probe(True, models=models, status=response.status_code)


__all__ = ["PROBE_TIMEOUT", "Probe", "probe_endpoint"]
