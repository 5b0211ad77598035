"""The HTTP API under load against the in-process Python API, on the same data.

    python benchmarks/http_load.py --uri bolt://127.0.0.1:7722 --port 8099 [--units 100000]
        [--clients 16,32] [--seconds 60] [--write-share 0.1,0.5] [--workers 1,2] [--reuse] [--json]

WIPES THE TARGET DATABASE (unless --reuse finds it loaded). Point it at a dedicated server.

Load: --units facts through ``GraphMem.ingest`` (the write pipeline, `facts` extractor, hashing
embedder: what the server runs), ten facts an episode, 1,000 facts a write, spread over
--subjects subjects; then one admin API key.

Run 1, HTTP: `graphmem serve --workers N` in a subprocess (its default concurrency cap and
timeout; each of --workers in turn, RSS summed over its processes), then
--clients threads, each with its own keep-alive connection, for --seconds: each request is a
recall (POST .../recall, k=10, a random subject, the words of one of its facts) or, with
probability --write-share, one new episode with one fact (POST .../episodes). Per route:
requests, throughput, p50/p95 latency, errors (any status but 200, or a failed connection);
the server's RSS sampled every second (peak and last).

Run 2, in process: the same mix with the same number of threads calling ``GraphMem.recall`` and
``GraphMem.ingest`` directly, for the same time. Each run follows --warmup seconds of the same
load, not measured. Both runs for each of --clients and each of --write-share (comma lists: a
recall-heavy and a write-heavy mix by default), side by side, with HTTP's throughput as a share
of in process's. Targets (issue 45): that share >= 0.8; recall p95 <= 300 ms over HTTP at 16
clients. ``--json`` prints one JSON object last.

Where an HTTP request's time goes, from the server's own /metrics (scraped before and after the
measured run): each route's mean as the client saw it, as the server timed it (from its first
middleware to its answer), and, for recall, the recall itself (``graphmem_recall_seconds``). The
differences are the network and the client's threads, and the HTTP stack plus waiting for a
place in the server's gate.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median, pct, wipe

from graphmem import GraphMem
from graphmem.domain.models import Episode, Fact, Scope
from graphmem.settings.config import Settings

PREDICATES = ("likes", "visited", "works_with", "owns", "reads", "plays")
WORDS = (
    "amber",
    "birch",
    "cobalt",
    "delta",
    "ember",
    "fjord",
    "granite",
    "harbor",
    "indigo",
    "juniper",
    "kelp",
    "lumen",
    "maple",
    "nectar",
    "onyx",
    "pebble",
    "quartz",
    "raven",
    "saffron",
    "tundra",
)
ROOT = Path(__file__).resolve().parents[1]
#: Serial numbers of the facts the runs write: every written fact is new.
SERIALS = itertools.count(10_000_000)


def subjects(n: int) -> list[str]:
    return [f"user:load-{i:04d}" for i in range(n)]


def fact(rng: random.Random, serial: int) -> Fact:
    what = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {serial}"
    predicate = rng.choice(PREDICATES)
    return Fact(
        subject=f"Person {serial % 997}",
        predicate=predicate,
        object=what,
        content=f"Person {serial % 997} {predicate.replace('_', ' ')} {what}",
    )


def load(mem: GraphMem, n: int, names: list[str], seed: int) -> float:
    rng, at = random.Random(seed), datetime(2024, 1, 1, tzinfo=UTC)
    started, serial, per_subject = time.perf_counter(), 0, n // len(names)
    for name in names:
        scope = Scope.parse(name)
        episodes = []
        for _ in range(0, per_subject, 10):
            facts = tuple(fact(rng, serial + j) for j in range(10))
            serial += 10
            episodes.append(
                Episode(scope=scope, occurred_at=at, raw=f"facts up to {serial}", channel="document", facts=facts)
            )
        for i in range(0, len(episodes), 100):
            mem.ingest(episodes[i : i + 100])
    return time.perf_counter() - started


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {"recall": [], "episodes": []}
        self.errors: dict[str, int] = {"recall": 0, "episodes": 0}
        self.first_errors: list[str] = []

    def add(self, route: str, ms: float, error: str | None) -> None:
        with self.lock:
            if error is None:
                self.times[route].append(ms)
            else:
                self.errors[route] += 1
                if len(self.first_errors) < 5:
                    self.first_errors.append(f"{route}: {error}")

    def summary(self, seconds: float) -> dict:
        routes = {}
        for route, t in self.times.items():
            routes[route] = {
                "requests": len(t) + self.errors[route],
                "per_s": round(len(t) / seconds, 1),
                "p50_ms": round(median(t), 2),
                "p95_ms": round(pct(t, 95), 2),
                "errors": self.errors[route],
            }
        total = sum(len(t) for t in self.times.values())
        return {
            "seconds": round(seconds, 1),
            "throughput_per_s": round(total / seconds, 1),
            "errors": sum(self.errors.values()),
            "routes": routes,
            "first_errors": self.first_errors,
        }


def drive(clients: int, seconds: float, step) -> tuple[Recorder, float]:
    """``clients`` threads calling ``step(thread_no, rng, recorder)`` until the time is up."""
    recorder, deadline = Recorder(), time.monotonic() + seconds

    def worker(no: int) -> None:
        rng = random.Random(no)
        state: dict = {}
        while time.monotonic() < deadline:
            step(no, rng, recorder, state)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return recorder, time.monotonic() - began


def question(rng: random.Random) -> str:
    return f"what does Person {rng.randrange(997)} like {rng.choice(WORDS)}"


def http_step(port: int, token: str, names: list[str], write_share: float):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def step(no: int, rng: random.Random, rec: Recorder, state: dict) -> None:
        conn = state.get("conn") or state.setdefault("conn", http.client.HTTPConnection("127.0.0.1", port, timeout=120))
        subject = rng.choice(names).replace(":", "%3A")
        if rng.random() < write_share:
            route, path = "episodes", f"/v1/subjects/{subject}/episodes"
            f = fact(rng, next(SERIALS))
            body = {"episodes": [{"occurred_at": "2024-06-01", "raw": f.content, "facts": [f.model_dump(mode="json")]}]}
        else:
            route, path, body = "recall", f"/v1/subjects/{subject}/recall", {"query": question(rng), "k": 10}
        began = time.perf_counter()
        try:
            conn.request("POST", path, body=json.dumps(body), headers=headers)
            response = conn.getresponse()
            data = response.read()
            error = None if response.status == 200 else f"{response.status} {data[:200]!r}"
        except (OSError, http.client.HTTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"
            conn.close()
            state.pop("conn")
        rec.add(route, (time.perf_counter() - began) * 1000, error)

    return step


def inproc_step(mem: GraphMem, names: list[str], write_share: float):
    def step(no: int, rng: random.Random, rec: Recorder, state: dict) -> None:
        scope = Scope.parse(rng.choice(names))
        began = time.perf_counter()
        try:
            if rng.random() < write_share:
                route = "episodes"
                f = fact(rng, next(SERIALS))
                mem.ingest(
                    [
                        Episode(
                            scope=scope,
                            occurred_at=datetime(2024, 6, 1, tzinfo=UTC),
                            raw=f.content,
                            facts=(f,),
                        )
                    ],
                    actor="bench",
                )
            else:
                route = "recall"
                mem.recall(question(rng), scope, k=10)
            error = None
        except Exception as exc:  # counted, the run goes on
            error = f"{type(exc).__name__}: {exc}"
        rec.add(route, (time.perf_counter() - began) * 1000, error)

    return step


def rss_mb(pid: int) -> float:
    """The resident memory of a process and its children (a server's workers), in MB."""
    total = float("nan")
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            total = int(line.split()[1]) / 1024
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            total += rss_mb(int(child))
    return total


def serve(uri: str, port: int, workers: int) -> subprocess.Popen:
    env = {**os.environ, "NEO4J_URI": uri, "GRAPHMEM_EMBEDDER": "hashing"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphmem.cli.main", "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # A busy machine (five people's tests on two cores) took over a minute to start it.
    deadline = time.monotonic() + READY_WITHIN
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"graphmem serve exited {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/readyz")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"graphmem serve was not ready within {READY_WITHIN} s")


TARGETS = {"http_share": 0.8, "recall_p95_ms_at_16": 300}
#: Seconds `graphmem serve` may take to answer /readyz with 200.
READY_WITHIN = 180
ROUTES = {"recall": "/v1/subjects/{subject}/recall", "episodes": "/v1/subjects/{subject}/episodes"}


def server_figures(port: int) -> dict[tuple[str, tuple], float]:
    """Every sample of the server's /metrics (served to this machine by default)."""
    from prometheus_client.parser import text_string_to_metric_families

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def mean_ms(before: dict, after: dict, name: str, **labels: str) -> float | None:
    key = tuple(sorted(labels.items()))
    count = after.get((f"{name}_count", key), 0) - before.get((f"{name}_count", key), 0)
    total = after.get((f"{name}_sum", key), 0) - before.get((f"{name}_sum", key), 0)
    return round(1000 * total / count, 1) if count else None


def time_split(rec: Recorder, before: dict, after: dict) -> dict:
    """Per route: mean ms at the client, at the server, and (recall) in the recall itself."""
    split = {}
    for route, template in ROUTES.items():
        times = rec.times[route]
        labels = {"method": "POST", "route": template, "status": "200"}
        split[route] = {
            "client_ms": round(sum(times) / len(times), 1) if times else None,
            "server_ms": mean_ms(before, after, "graphmem_http_request_seconds", **labels),
        }
    split["recall"]["recall_work_ms"] = mean_ms(before, after, "graphmem_recall_seconds", hops="0")
    return split


def numbers(kind: type) -> Callable[[str], list]:
    return lambda text: [kind(x) for x in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7691"))
    ap.add_argument("--port", type=int, default=8099, help="the HTTP port of the server under test")
    ap.add_argument("--units", type=int, default=100_000)
    ap.add_argument("--subjects", type=int, default=100)
    ap.add_argument("--clients", type=numbers(int), default=[16, 32], help="comma list")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--warmup", type=float, default=5, help="seconds of unmeasured load before each run")
    ap.add_argument("--write-share", type=numbers(float), default=[0.1, 0.5], help="comma list")
    ap.add_argument("--workers", type=numbers(int), default=[1], help="server processes (serve --workers), comma list")
    ap.add_argument("--reuse", action="store_true", help="keep the data when it already holds --units units")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print one JSON object last")
    args = ap.parse_args()

    settings = Settings.from_env(neo4j_uri=args.uri, embedder="hashing")
    load_before = round(os.getloadavg()[0], 2)
    names = subjects(args.subjects)
    mem = GraphMem.connect(settings, check_index=False)  # another benchmark's index is wiped below
    units = mem.stats()["units"]
    if args.reuse and units >= args.units:
        load_s = None
        print(f"reusing {units} units", file=sys.stderr)
    else:
        mem.close()
        wipe(args.uri)  # nodes and vector indexes: another benchmark's may have other dimensions
        mem = GraphMem.connect(settings)
        load_s = load(mem, args.units, names, args.seed)
        units = mem.stats()["units"]
        print(f"loaded {units} units in {load_s:.0f} s ({units / load_s:.0f}/s)", file=sys.stderr)
    _, token = mem.create_key([], admin=True, name="http-load")

    runs = [
        run(args, mem, token, names, clients, share, workers)
        for clients in args.clients
        for share in args.write_share
        for workers in args.workers
    ]
    mem.close()
    result = {
        # What the server ran with (a single-tenant deployment sets the key's share to the whole
        # cap: GRAPHMEM_HTTP_KEY_CONCURRENCY), and how busy the machine was (1-minute load).
        "server": {
            "concurrency": settings.http_concurrency,
            "key_concurrency": min(settings.http_key_concurrency, settings.http_concurrency),
        },
        "load_average": {"before": load_before, "after": round(os.getloadavg()[0], 2)},
        "units": units,
        "subjects": args.subjects,
        "load_seconds": None if load_s is None else round(load_s),
        "targets": TARGETS,
        "runs": runs,
    }
    print(
        f"{'clients':>7}{'writes':>7}{'procs':>6}  {'':12}{'route':<10}{'req':>7}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'errors':>8}"
    )
    for r in runs:
        for name, side in (("HTTP", r["http"]), ("in process", r["in_process"])):
            for route, x in side["routes"].items():
                print(
                    f"{r['clients']:>7}{r['write_share']:>7}{r['workers']:>6}  {name:<12}{route:<10}"
                    f"{x['requests']:>7}{x['per_s']:>8}{x['p50_ms']:>9}{x['p95_ms']:>9}{x['errors']:>8}"
                )
            lead = f"{r['clients']:>7}{r['write_share']:>7}{r['workers']:>6}  {name:<12}"
            print(f"{lead}{'all':<10}{'':>7}{side['throughput_per_s']:>8}")
        rss = r["http"]["server_rss_mb"]
        print(f"{'':16}HTTP/in process {r['http_share']:.2f}; server RSS idle {rss['idle']} MB, peak {rss['peak']} MB")
        for route, x in r["http"]["time_split_ms"].items():
            print(f"{'':16}{route} mean ms: " + ", ".join(f"{k.removesuffix('_ms')} {v}" for k, v in x.items()))
        for line in r["http"]["first_errors"] + r["in_process"]["first_errors"]:
            print(f"error: {line}")
    if args.json:
        print(json.dumps(result))


def run(
    args: argparse.Namespace, mem: GraphMem, token: str, names: list[str], clients: int, share: float, workers: int
) -> dict:
    """HTTP (``workers`` server processes) then in process, ``clients`` at once, writes ``share``
    of the requests."""
    proc = serve(args.uri, args.port, workers)
    samples: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(1.0):
            samples.append(rss_mb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    try:
        idle_rss = rss_mb(proc.pid)
        sampler.start()
        print(f"HTTP: {clients} clients, writes {share:g}, {workers} workers, for {args.seconds:g} s", file=sys.stderr)
        step = http_step(args.port, token, names, share)
        drive(clients, args.warmup, step)
        before = server_figures(args.port)
        rec, took = drive(clients, args.seconds, step)
        after = server_figures(args.port)
        stop.set()
        sampler.join()
        over_http = {
            **rec.summary(took),
            "server_rss_mb": {"idle": round(idle_rss), "peak": round(max(samples)), "last": round(samples[-1])},
            "time_split_ms": time_split(rec, before, after),
        }
    finally:
        proc.terminate()
        proc.wait(30)

    print(f"in process: {clients} threads, writes {share:g}, for {args.seconds:g} s", file=sys.stderr)
    step = inproc_step(mem, names, share)
    drive(clients, args.warmup, step)
    rec, took = drive(clients, args.seconds, step)
    in_process = {**rec.summary(took), "process_rss_mb": round(rss_mb(os.getpid()))}
    return {
        "clients": clients,
        "write_share": share,
        "workers": workers,
        "http": over_http,
        "in_process": in_process,
        "http_share": round(over_http["throughput_per_s"] / in_process["throughput_per_s"], 3),
    }


if __name__ == "__main__":
    main()
