"""Server-side HTML: every piece of text goes through :func:`esc` (a stored ``<script>``
shows as text), pages share one layout, charts are inline SVG built here."""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Sequence
from urllib.parse import urlencode

NAV = (
    ("/", "People"),
    ("/memory", "Memory"),
    ("/sessions", "Sessions"),
    ("/skills", "Skills"),
    ("/provider", "Provider"),
    ("/trace", "Recall trace"),
    ("/forget", "Forget"),
)


def esc(value: object) -> str:
    """``value`` as inert HTML text (quotes escaped too, so it is safe in attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def when(ts: float | None) -> str:
    if not ts:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def link(path: str, label: object, **params: object) -> str:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    href = f"{path}?{query}" if query else path
    return f'<a href="{esc(href)}">{esc(label)}</a>'


def user_label(user_id: str | None) -> str:
    return "(no user)" if user_id is None else user_id


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    """A table; ``rows`` cells are HTML already (escape text with :func:`esc`)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    if not body:
        body = f'<tr><td colspan="{len(headers)}" class="empty">nothing here</td></tr>'
    return f'<table class="{esc(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def hidden(name: str, value: object) -> str:
    return f'<input type="hidden" name="{esc(name)}" value="{esc(value)}">'


def form(
    action: str,
    fields: str,
    button: str,
    *,
    csrf: str,
    user: str | None,
    confirm: str = "",
    cls: str = "inline",
) -> str:
    """A POST form carrying the CSRF token and the user; ``fields`` is HTML."""
    data = f' data-confirm="{esc(confirm)}"' if confirm else ""
    scope = hidden("u", user) if user is not None else ""
    return (
        f'<form method="post" action="{esc(action)}" class="{esc(cls)}"{data}>'
        f"{hidden('csrf', csrf)}{scope}{fields}"
        f'<button type="submit">{esc(button)}</button></form>'
    )


def usage_bar(current: int, limit: int) -> str:
    pct = 0 if limit <= 0 else min(100, round(100 * current / limit))
    level = "high" if pct >= 90 else "mid" if pct >= 70 else "low"
    return (
        f'<div class="bar" title="{current:,}/{limit:,} chars">'
        f'<div class="fill {level}" style="width:{pct}%"></div></div>'
        f'<span class="usage">{current:,}/{limit:,} chars ({pct}%)</span>'
    )


def bar_chart(title: str, items: Sequence[tuple[str, float]], *, unit: str = "") -> str:
    """A horizontal bar chart as inline SVG (labels escaped)."""
    if not items:
        return (
            f'<figure class="chart"><figcaption>{esc(title)}</figcaption>'
            '<p class="empty">no data</p></figure>'
        )
    top = max(v for _, v in items) or 1.0
    row, label_w, bar_w = 22, 160, 360
    parts = []
    for i, (label, value) in enumerate(items):
        y = i * row
        width = max(1.0, bar_w * value / top)
        parts.append(
            f'<text x="0" y="{y + 15}" class="lbl">{esc(label[:24])}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{width:.1f}" height="14" class="b"></rect>'
            f'<text x="{label_w + width + 6:.1f}" y="{y + 15}" class="val">'
            f"{esc(f'{value:,.1f}'.removesuffix('.0'))}{esc(unit)}</text>"
        )
    height = row * len(items) + 4
    return (
        f'<figure class="chart"><figcaption>{esc(title)}</figcaption>'
        f'<svg role="img" aria-label="{esc(title)}" width="{label_w + bar_w + 90}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg></figure>'
    )


def page(
    title: str,
    body: str,
    *,
    user: str | None,
    people: Sequence[str | None] = (),
    read_only: bool = False,
    notice: str = "",
    ok: bool = True,
    bound_user: bool = False,
) -> str:
    """The layout: navigation (keeping the user), the user picker, a notice, the body."""
    keep = "?" + urlencode({"u": user}) if user is not None else ""
    nav = " ".join(
        f'<a href="{esc(path + (keep if path != "/" else ""))}">{esc(label)}</a>'
        for path, label in NAV
    )
    options = "".join(
        f'<option value="{esc("" if p is None else p)}"{" selected" if p == user else ""}>'
        f"{esc(user_label(p))}</option>"
        for p in people
    )
    picker = (
        ""
        if bound_user or not people
        else f'<form method="get" class="picker" id="picker"><label>User '
        f'<select name="u" id="user-picker">{options}</select></label>'
        f"<noscript><button>show</button></noscript></form>"
    )
    mode = '<span class="ro">read-only</span>' if read_only else ""
    box = (
        f'<div class="notice {"ok" if ok else "err"}" role="status">{esc(notice)}</div>'
        if notice
        else ""
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)} · hermes-memory ui</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/ui.css"><script src="/static/ui.js" defer></script>'
        "</head><body><header><strong>hermes-memory ui</strong> "
        f"{mode}<nav>{nav}</nav>{picker}</header>"
        f"<main><h1>{esc(title)}</h1>{box}{body}</main></body></html>"
    )


__all__ = [
    "bar_chart",
    "esc",
    "form",
    "hidden",
    "link",
    "page",
    "table",
    "usage_bar",
    "user_label",
    "when",
]
