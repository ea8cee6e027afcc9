"""Running the viewer's server until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import Any

from ._site import Site

__all__ = ["serve"]


def serve(
    site: Site,
    *,
    host: str,
    port: int,
    store_label: str,
    ready: Callable[[str], None],
) -> None:
    """Serve ``site`` on ``host:port`` until SIGINT or SIGTERM, then return.

    Args:
        site: What to serve.
        host: The address to bind (loopback unless the user chose otherwise).
        port: The port (0: a free one, told through ``ready``).
        store_label: How the runs list names the store.
        ready: Called with the URL once the server listens.

    Raises:
        OSError: The address cannot be bound (in use, not this machine's).
    """
    asyncio.run(_serve(site, host, port, store_label, ready))


async def _serve(
    site: Site, host: str, port: int, store_label: str, ready: Callable[[str], None]
) -> None:
    from aiohttp import web

    from ._app import build_app, is_loopback

    app = build_app(site, store_label=store_label, loopback_only=is_loopback(host))
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site_ = web.TCPSite(runner, host, port)
        await site_.start()
        # The port the system chose for --port 0 (aiohttp keeps its server private).
        server: Any = site_._server
        sockets = server.sockets if server is not None else ()
        bound = sockets[0].getsockname()[1] if sockets else port
        shown = f"[{host}]" if ":" in host else host
        ready(f"http://{shown}:{bound}/")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()
