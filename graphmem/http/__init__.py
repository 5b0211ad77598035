"""graphmem over HTTP: the JSON API under ``/v1``, health probes and the memory browser page.

    from graphmem import GraphMem
    from graphmem.http import HttpConfig, create_app

    with GraphMem.connect() as mem:
        app = create_app(lambda: mem, HttpConfig())   # any ASGI server runs it

``graphmem serve`` does this with uvicorn (the ``server`` extra).

- ``app``: the app factory (``HttpConfig`` from ``config``), the probes and the page.
- ``routes``: one router per resource, each route a few lines over one ``GraphMem`` method
  rendered by ``graphmem.faces.views``; ``context`` (what a route takes from its request),
  ``bodies`` (what it reads), ``schemas`` (what it answers), ``jobs`` (late writes).
- ``guard``: what every request passes before a route runs (the Host check, keys, the body
  limit, raw paths, headers, the access log) and ``Gate``, the concurrency cap and timeout.
- ``errors``: graphmem's errors as ``{"error": {"code", "message"}}`` with their status.
"""

from graphmem.http.app import HttpConfig, create_app

__all__ = ["HttpConfig", "create_app"]
