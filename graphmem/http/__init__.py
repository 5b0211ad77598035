"""graphmem over HTTP: the JSON API under ``/v1``, health probes and the memory browser page.

    from graphmem import GraphMem
    from graphmem.http import HttpConfig, create_app

    with GraphMem.connect() as mem:
        app = create_app(lambda: mem, HttpConfig())   # any ASGI server runs it

``graphmem serve`` does exactly this with uvicorn. Needs the optional extra:
``pip install 'graphmem[server]'``.

- ``app``: the routes, each a few lines over one ``GraphMem`` method rendered by
  ``graphmem.faces.views`` (the shapes of the CLI's ``--json`` and the MCP tools).
- ``guard``: what every request passes before a route runs: on a loopback address the Host
  check, API-key authentication and the subject check, the body size limit, routing on the raw
  path, security headers, the access log; and ``Gate``, the concurrency cap and request
  timeout the routes run their work under.
- ``errors``: graphmem's errors as ``{"error": {"code", "message"}}`` with their status.
"""

from graphmem.http.app import HttpConfig, create_app

__all__ = ["HttpConfig", "create_app"]
