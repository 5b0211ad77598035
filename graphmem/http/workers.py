"""Several server processes on one socket (``graphmem serve --workers N``): uvicorn's process
manager starts N workers, each opening its own GraphMem (driver, embedder) from the same
settings. What a worker keeps to itself is safe so: keys are read from Neo4j at every request,
jobs are stored there (``graphmem.http.jobs``), the unreachable mark is per connection, and
``/metrics`` sums the workers through prometheus-client's multiprocess folder."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path
from socket import socket

from fastapi import FastAPI
from prometheus_client.multiprocess import mark_process_dead

from graphmem.api import GraphMem
from graphmem.http.app import create_app
from graphmem.http.config import HttpConfig
from graphmem.settings.config import Settings

#: Seconds a worker may take to answer the manager's health check before it is restarted:
#: starting (connecting, loading the embedder) on a busy small machine takes longer than
#: uvicorn's default 5 s, and a restart would only start the same work again.
HEALTH_CHECK = 30
#: Metrics folder variable of prometheus-client's multiprocess mode.
METRICS_DIR = "PROMETHEUS_MULTIPROC_DIR"


def log_to_stderr() -> None:
    """The server's log lines (access lines included) on stderr, in every process."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def worker_app(settings: Settings, config: HttpConfig) -> FastAPI:
    """One worker's app (uvicorn calls it in the worker process): its own GraphMem, opened at
    startup (the parent applied the migrations) and closed at shutdown."""
    log_to_stderr()
    forget_dead_workers()
    # Nothing touches Neo4j before the first request (the parent checked the index): a worker
    # replaced during an outage starts, answers 503 as one process would, and recovers with it.
    return create_app(lambda: GraphMem.connect(settings, migrate=False, check_index=False), config, owned=True)


def forget_dead_workers() -> None:
    """Drop the live gauges of workers that died (a replaced one): else its last "Neo4j
    unreachable" would stay in ``/metrics`` for good."""
    folder = os.environ.get(METRICS_DIR)
    if not folder:
        return
    for path in Path(folder).glob("gauge_live*_*.db"):
        pid = int(path.stem.rsplit("_", 1)[1])
        if not alive(pid):
            mark_process_dead(pid, folder)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal: only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def serve_workers(settings: Settings, config: HttpConfig, sock: socket, workers: int) -> None:
    """Serve ``sock`` with ``workers`` processes until a signal stops them. Without a metrics
    folder of the caller's, one made for this run (and removed after it)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    made = None
    if not os.environ.get(METRICS_DIR):
        made = os.environ[METRICS_DIR] = tempfile.mkdtemp(prefix="graphmem-metrics-")
    try:
        server = uvicorn.Config(
            partial(worker_app, settings, config),
            factory=True,
            workers=workers,
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=10,
            timeout_worker_healthcheck=HEALTH_CHECK,
        )
        Multiprocess(server, sockets=[sock]).run()
    finally:
        if made is not None:
            del os.environ[METRICS_DIR]
            shutil.rmtree(made, ignore_errors=True)
