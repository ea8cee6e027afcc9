"""The viewer's HTTP server (aiohttp.web): read-only, GET only, loopback by default.

Every response, errors included, carries a strict Content-Security-Policy (no inline script,
``default-src 'self'``) and ``nosniff``; any method but GET and HEAD is refused (405). Bound to
loopback, the server also refuses requests whose Host is not a loopback name, so a web page
elsewhere cannot read the runs through DNS rebinding.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web

from .._exceptions import StoreError
from ..store import QueryError
from ._pages import CSP, Links
from ._site import Site

__all__ = ["HEADERS", "build_app", "is_loopback"]

HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_ASSETS = {"viewer.css": "text/css", "viewer.js": "text/javascript"}
_LINKS = Links()
_SITE_KEY = web.AppKey("site", Site)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) stays on this machine."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """The host of a Host header, without its port."""
    if header.startswith("["):
        return header[: header.find("]") + 1]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _json_error(status: int, message: str) -> web.Response:
    body = {"error": {"status": status, "message": message}}
    from .._json import report_json_bytes

    return web.Response(
        status=status, body=report_json_bytes(body), content_type="application/json"
    )


def _page_error(status: int, reason: str, message: str) -> web.Response:
    html = Site.error_page(status, reason, message, _LINKS)
    return web.Response(status=status, text=html, content_type="text/html")


def _error(request: web.Request, status: int, reason: str, message: str) -> web.Response:
    if request.path.startswith("/api/"):
        return _json_error(status, message)
    return _page_error(status, reason, message)


def _middlewares(loopback_only: bool) -> list[Any]:
    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        response: web.StreamResponse
        if loopback_only and not is_loopback(_host_name(request.host)):
            response = _error(
                request,
                421,
                "Misdirected Request",
                "this server answers only to a loopback host name (127.0.0.1, localhost, [::1])",
            )
        else:
            try:
                response = await handler(request)
            except QueryError as error:
                response = _error(request, 400, "Bad Request", str(error))
            except StoreError as error:
                response = _error(request, 404, "Not Found", str(error))
            except web.HTTPException as error:
                if error.status == 405:
                    message = f"{request.method} is not allowed: the viewer is read-only (GET)"
                elif error.status == 404:
                    message = f"no page at {request.path}"
                else:
                    message = error.reason
                response = _error(request, error.status, error.reason, message)
                if error.status == 405:
                    response.headers["Allow"] = "GET, HEAD"
            except Exception as error:  # a bug: say so, with the headers every response has
                reason = " ".join(str(error).split())[:300]
                response = _error(
                    request, 500, "Internal Server Error", f"{type(error).__name__}: {reason}"
                )
        response.headers.update(HEADERS)
        return response

    return [guard]


async def _in_thread(work: Callable[[], Any]) -> Any:
    # SQLite and rendering block; each call opens its own read-only connection.
    return await asyncio.to_thread(work)


def _query(request: web.Request) -> dict[str, str]:
    return {name: request.query.get(name, "") for name in request.query}


def _json(body: bytes) -> web.Response:
    return web.Response(body=body, content_type="application/json")


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html")


def build_app(site: Site, *, store_label: str, loopback_only: bool = True) -> web.Application:
    """The viewer's aiohttp application over ``site``.

    Args:
        site: What to serve (the store's queries).
        store_label: How the runs list names the store.
        loopback_only: Answer only requests addressed to a loopback host name.
    """
    app = web.Application(middlewares=_middlewares(loopback_only))
    app[_SITE_KEY] = site

    async def runs_api(request: web.Request) -> web.Response:
        return _json(await _in_thread(lambda: site.runs_json(_query(request))))

    async def run_api(request: web.Request) -> web.Response:
        name = request.match_info["run_id"]
        return _json(await _in_thread(lambda: site.run_json(name, _query(request))))

    async def progress_api(request: web.Request) -> web.Response:
        name = request.match_info["run_id"]
        return _json(await _in_thread(lambda: site.progress_json(name, _query(request))))

    async def diff_api(request: web.Request) -> web.Response:
        return _json(await _in_thread(lambda: site.diff_json(_query(request))))

    async def runs_page(request: web.Request) -> web.Response:
        query = _query(request)
        return _html(await _in_thread(lambda: site.runs_page(query, _LINKS, store_label)))

    async def run_page(request: web.Request) -> web.Response:
        name = request.match_info["run_id"]
        query = _query(request)
        return _html(await _in_thread(lambda: site.run_page(name, query, _LINKS)))

    async def compare_page(request: web.Request) -> web.Response:
        query = _query(request)
        api = "/api/diff?" + request.query_string
        return _html(await _in_thread(lambda: site.compare_page(query, _LINKS, api)))

    async def asset(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in _ASSETS:
            raise web.HTTPNotFound()
        data = resources.files("assertly.viewer").joinpath("static", name).read_bytes()
        return web.Response(body=data, content_type=_ASSETS[name])

    app.router.add_get("/", runs_page)
    app.router.add_get("/runs/{run_id}", run_page)
    app.router.add_get("/compare", compare_page)
    app.router.add_get("/api/runs", runs_api)
    app.router.add_get("/api/runs/{run_id}", run_api)
    app.router.add_get("/api/runs/{run_id}/progress", progress_api)
    app.router.add_get("/api/diff", diff_api)
    app.router.add_get("/static/{name}", asset)
    return app
