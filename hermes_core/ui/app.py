"""The starlette application of ``hermes-memory ui``: routes, the guard applied to every request,
and the translation of a request into a page :class:`~.pages.Ctx`.

GET pages render; POST actions change something and answer with a 303 redirect carrying a
short notice (``msg``/``ok``), or (forget preview and proof) render their result directly.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from hermes_core.errors import HermesError
from hermes_core.scope import normalize_user_id

from . import pages
from .guard import COOKIE, SECURITY_HEADERS, Guard
from .html import esc, page

if TYPE_CHECKING:
    from hermes_core.host import MemoryHost

log = logging.getLogger(__name__)

GET_PAGES: dict[str, tuple[str, Callable[[pages.Ctx], str]]] = {
    "/": ("People", pages.people_page),
    "/memory": ("Memory", pages.memory_page),
    "/sessions": ("Sessions", pages.sessions_page),
    "/session": ("Session", pages.session_page),
    "/skills": ("Skills", pages.skills_page),
    "/skill": ("Skill", pages.skill_page),
    "/provider": ("Provider", pages.provider_page),
    "/trace": ("Recall trace", pages.trace_page),
    "/forget": ("Forget", pages.forget_page),
}
ACTIONS: dict[str, Callable[[pages.Ctx], pages.Done]] = {
    "/memory/add": pages.memory_add,
    "/memory/replace": pages.memory_replace,
    "/memory/remove": pages.memory_remove,
    "/memory/expire": pages.memory_expire,
    "/memory/approve": pages.memory_approve,
    "/memory/reject": pages.memory_reject,
    "/session/delete": pages.session_delete,
    "/skill/revert": pages.skill_revert,
    "/provider/forget": pages.provider_forget,
    "/provider/expire": pages.provider_expire,
    "/forget/user": pages.forget_user_action,
}
RESULT_PAGES: dict[str, tuple[str, Callable[[pages.Ctx], str]]] = {
    "/forget/preview": ("Forget: matches", pages.forget_preview),
    "/forget/confirm": ("Forget: proof", pages.forget_confirm),
}
STATIC = {"ui.css": "text/css; charset=utf-8", "ui.js": "text/javascript; charset=utf-8"}
MAX_BODY = 256 * 1024


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Inspector:
    """One running app: the host it shows and the guard of its requests."""

    def __init__(self, host: MemoryHost, guard: Guard) -> None:
        self.host = host
        self.guard = guard

    # -- the guard

    def _check(self, request: Request) -> str | None:
        """Apply the host check and the token; returns the user a token binds to."""
        if not self.guard.host_allowed(request.headers.get("host", "")):
            raise Refused(
                421, "this hermes-memory ui only answers requests for its loopback address"
            )
        if not self.guard.needs_token:
            return None
        presented = request.cookies.get(COOKIE) or request.query_params.get("token")
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            presented = auth[7:].strip()
        access = self.guard.access(presented)
        if not access.allowed:
            raise Refused(401, f"{access.reason}: open the URL printed by `hermes-memory ui`")
        return access.bound_user

    def _user(self, values: dict[str, str], bound: str | None) -> str | None:
        user = normalize_user_id(values.get("u"))
        if bound is not None:
            if "u" in values and user != bound:
                raise Refused(403, "this token shows one user only")
            return bound
        return user

    def _ctx(self, values: dict[str, str], bound: str | None) -> pages.Ctx:
        return pages.Ctx(
            host=self.host,
            user=self._user(values, bound),
            params=values,
            csrf=self.guard.csrf,
            read_only=self.guard.read_only,
        )

    def _page(
        self,
        title: str,
        body: str,
        ctx: pages.Ctx,
        bound: str | None,
        *,
        status: int = 200,
        notice: str = "",
        ok: bool = True,
    ) -> HTMLResponse:
        people = [ctx.user] if bound is not None else pages.people_ids(self.host)
        if ctx.user not in people:
            people = [ctx.user, *people]
        html = page(
            title,
            body,
            user=ctx.user,
            people=people,
            read_only=self.guard.read_only,
            notice=notice,
            ok=ok,
            bound_user=bound is not None,
        )
        return HTMLResponse(html, status_code=status)

    # -- endpoints

    async def dispatch(self, request: Request) -> Response:
        try:
            response = await self._dispatch(request)
        except Refused as refusal:
            response = HTMLResponse(
                "<!doctype html><title>refused</title>"
                f"<h1>{refusal.status}</h1><p>{esc(refusal)}</p>",
                status_code=refusal.status,
            )
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    async def _dispatch(self, request: Request) -> Response:
        path = request.url.path
        if path.startswith("/static/"):
            return self._static(path.removeprefix("/static/"))
        bound = self._check(request)
        if request.method == "GET" and "token" in request.query_params and self.guard.needs_token:
            rest = {k: v for k, v in request.query_params.items() if k != "token"}
            target = path + ("?" + urlencode(rest) if rest else "")
            response = RedirectResponse(target, status_code=303)
            token = request.query_params["token"]
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
            return response
        if request.method == "GET":
            return await self._get(request, path, bound)
        if request.method == "POST":
            return await self._post(request, path, bound)
        raise Refused(405, "method not allowed")

    def _static(self, name: str) -> Response:
        if name not in STATIC:
            return PlainTextResponse("not found", status_code=404)
        data = resources.files("hermes_core.ui").joinpath("static", name).read_bytes()
        return Response(data, media_type=STATIC[name])

    async def _get(self, request: Request, path: str, bound: str | None) -> Response:
        values = dict(request.query_params)
        if path == "/session/export":
            ctx = self._ctx(values, bound)
            try:
                body, media, filename = await _threaded(pages.session_export, ctx)
            except pages.NotFound as exc:
                return PlainTextResponse(str(exc), status_code=404)
            return Response(
                body,
                media_type=media,
                headers={"Content-Disposition": f'attachment; filename="{filename}"'},
            )
        if path not in GET_PAGES:
            return PlainTextResponse("not found", status_code=404)
        ctx = self._ctx(values, bound)
        title, render = GET_PAGES[path]
        try:
            body = await _threaded(render, ctx)
        except pages.NotFound as exc:
            return self._page("Not found", f"<p>{esc(exc)}</p>", ctx, bound, status=404)
        except HermesError as exc:
            return self._page(title, "", ctx, bound, status=400, notice=str(exc), ok=False)
        return self._page(
            title, body, ctx, bound, notice=ctx.get("msg"), ok=ctx.get("ok", "1") == "1"
        )

    async def _post(self, request: Request, path: str, bound: str | None) -> Response:
        if path not in ACTIONS and path not in RESULT_PAGES:
            return PlainTextResponse("not found", status_code=404)
        if int(request.headers.get("content-length") or 0) > MAX_BODY:
            raise Refused(413, "request too large")
        raw = await request.form()
        values = {k: v for k, v in raw.items() if isinstance(v, str)}
        if not self.guard.csrf_ok(values.get("csrf") or request.headers.get("x-csrf-token")):
            raise Refused(403, "missing or wrong CSRF token: reload the page and try again")
        if self.guard.read_only:
            raise Refused(
                403, "this hermes-memory ui is read-only (--read-only): nothing was changed"
            )
        ctx = self._ctx(values, bound)
        if path in RESULT_PAGES:
            title, render = RESULT_PAGES[path]
            try:
                body = await _threaded(render, ctx)
            except HermesError as exc:
                return self._page(title, "", ctx, bound, status=400, notice=str(exc), ok=False)
            return self._page(title, body, ctx, bound)
        try:
            done = await _threaded(ACTIONS[path], ctx)
        except pages.NotFound as exc:
            return self._page("Not found", f"<p>{esc(exc)}</p>", ctx, bound, status=404)
        except HermesError as exc:
            done = pages.Done("/", f"refused: {exc}", False)
        query: dict[str, Any] = {"msg": done.message[:500], "ok": "1" if done.ok else "0"}
        if ctx.user is not None and bound is None:
            query["u"] = ctx.user
        return RedirectResponse(f"{done.path}?{urlencode(query)}", status_code=303)


async def _threaded(fn: Callable[[pages.Ctx], Any], ctx: pages.Ctx) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, ctx)


def create_app(host: MemoryHost, guard: Guard) -> Starlette:
    """The application serving ``host`` under ``guard``'s rules."""
    inspector = Inspector(host, guard)

    async def endpoint(request: Request) -> Response:
        return await inspector.dispatch(request)

    route: Callable[[Request], Awaitable[Response]] = endpoint
    app = Starlette(
        routes=[Route("/{path:path}", route, methods=["GET", "POST", "PUT", "DELETE", "PATCH"])]
    )
    app.state.inspector = inspector
    return app


def home_of(app: Starlette) -> Path:
    return Path(app.state.inspector.host.home)


__all__ = ["create_app"]
