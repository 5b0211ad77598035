"""The HTTP API's routes under ``/v1`` (docs/http.md), one router per resource: each route a few
lines over one ``GraphMem`` method, answered in a ``graphmem.faces.views`` shape and run under
the ``Gate`` (concurrency cap and timeout) through its ``context.Caller``."""

from fastapi import APIRouter

from graphmem.http.routes import blocks, episodes, read, subjects

#: Each resource's router, in the order the API describes them.
ROUTERS: tuple[APIRouter, ...] = (subjects.router, episodes.router, read.router, blocks.router)

__all__ = ["ROUTERS"]
