"""Offline experiments over a run kept by ``recall_lab.py collect`` (issue 44).

Each experiment replays graphmem's own recall (``Recaller`` over ``_recall.ListReplay`` with the
kept lists, hops and question vectors: no database), changes one thing, chooses its setting on
one half (LoCoMo and MuSiQue half A together, then B together) and reports it on the other, both
directions, beside the default replayed on the same questions, with a paired bootstrap:

- ``ppr``: personalized PageRank over the mention graph (units <-> entities, hubs above the
  walk's fanout left out), seeded from the first-stage fused hits and the units about the
  entities the question names; its ranking counts as one more fused list.
- ``learned``: fusion weights fitted by logistic regression over the signals the lists already
  give each candidate (each list's reciprocal rank and presence, the similarity).
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict

import locomo_recall
import numpy as np
from _recall import ListReplay, ask
from recall_lab import Offline, Scopes, print_result, table

from graphmem.domain.fusion import rrf, similar, together, walk
from graphmem.domain.models import AsOf, Hit, Scored, words
from graphmem.domain.timewords import find_window
from graphmem.pipelines.recall import Recaller

FANOUT = 50


class Kept:
    """A kept run, with how its hits map to gold documents."""

    def __init__(self, kept: dict):
        self.kept = kept
        self.lq, self.mq = kept["questions"]["locomo"], kept["questions"]["musique"]
        self.musique_doc = kept["episode_doc"]["musique"]
        self.units = kept.get("units", {})
        self.graph = Graph(kept["mentions"], self.units)

    def doc_of(self, episode_id: str) -> str:
        return self.musique_doc[episode_id] if episode_id.startswith("musique:") else locomo_recall.doc_of(episode_id)

    def replay(self, cls=ListReplay, **extra):
        replay = cls(Offline(self.kept["embedder"], self.kept["vectors"]), **extra)
        replay._lists, replay._hops = self.kept["lists"], self.kept["hops"]
        return replay

    def answers(self, replay, labels=("hybrid",), weights=None) -> dict[str, dict[str, list[str]]]:
        s = self.kept["settings"]
        recaller = Recaller(replay, rrf_k=s["rrf_k"], weights=weights or s["weights"])
        out: dict[str, dict[str, list[str]]] = {}
        for qs in (self.lq, self.mq):
            got, _ = ask(Scopes, qs, labels, recaller=recaller, doc_of=self.doc_of, now=self.kept["now"])
            for label, by_q in got.items():
                out.setdefault(label, {}).update(by_q)
        return out


class Graph:
    """The bipartite mention graph: unit -> entities, entity -> units, per scope; entities
    linked to more than ``FANOUT`` units (a chat's speakers) left out, as the walks leave them.
    A move is two steps, unit -> entity -> unit, each uniform: per scope a dense units x units
    transition matrix (LoCoMo's conversations hold about 600 units, MuSiQue 1,890)."""

    def __init__(self, mentions: dict, units: dict):
        by_scope: dict[str, dict[str, set[str]]] = defaultdict(dict)
        for uid, u in units.items():
            by_scope[u.scope.key][uid] = {name for name, _ in mentions.get(uid, ())}
        self.scope_of = {uid: u.scope.key for uid, u in units.items()}
        self.index: dict[str, dict[str, int]] = {}
        self.ids: dict[str, list[str]] = {}
        self.move: dict[str, np.ndarray] = {}
        self.entity_units: dict[str, list[str]] = {}
        for scope, ents in by_scope.items():
            ids = sorted(ents)
            degree: dict[str, int] = defaultdict(int)
            for names in ents.values():
                for n in names:
                    degree[n] += 1
            names = sorted(n for n, d in degree.items() if 1 < d <= FANOUT)
            col = {n: j for j, n in enumerate(names)}
            b = np.zeros((len(ids), len(names)), np.float32)
            for i, uid in enumerate(ids):
                for n in ents[uid]:
                    if n in col:
                        b[i, col[n]] = 1.0
            for n in names:
                self.entity_units[f"{scope}\x1f{n}"] = [ids[i] for i in np.flatnonzero(b[:, col[n]])]
            out_u = b / np.maximum(b.sum(1, keepdims=True), 1)
            out_e = (b / np.maximum(b.sum(0, keepdims=True), 1)).T
            m = out_u @ out_e  # units x units: row i, where unit i's mass goes
            alone = b.sum(1) == 0
            m[alone, alone] = 1.0  # a unit naming nothing keeps its mass
            self.index[scope] = {uid: i for i, uid in enumerate(ids)}
            self.ids[scope] = ids
            self.move[scope] = m.T.copy()  # p_next = move @ p

    def ppr(self, seeds: dict[str, float], alpha: float, iterations: int = 20) -> dict[str, float]:
        """Personalized PageRank over units, restarting to ``seeds`` (normalised) with
        probability 1 - alpha; seeds of other scopes than the first seed's are ignored."""
        if not seeds:
            return {}
        scope = self.scope_of.get(next(iter(seeds)))
        if scope not in self.index:
            return {}
        idx = self.index[scope]
        r = np.zeros(len(idx), np.float32)
        for u, w in seeds.items():
            if u in idx:
                r[idx[u]] += w
        if r.sum() <= 0:
            return {}
        r /= r.sum()
        p, m = r.copy(), self.move[scope]
        for _ in range(iterations):
            p = alpha * (m @ p) + (1 - alpha) * r
        nz = np.flatnonzero(p > 1e-9)
        return {self.ids[scope][i]: float(p[i]) for i in nz}


class PPRReplay(ListReplay):
    """A replay whose fusion gains one list: the units personalized PageRank ranks from the
    first-stage fused hits (``top`` of them, weighted by fused score) and, when ``named``, the
    units about entities the question names (those not hubs)."""

    def __init__(self, index, lab: Kept, weight: float, top: int, alpha: float, named: float):
        super().__init__(index)
        self.lab, self.weight, self.top, self.alpha, self.named = lab, weight, top, alpha, named

    def recall(self, request):
        lists = dict(self.lists(request))
        units = {s.unit.id: s.unit for hits in lists.values() for s in hits}
        sims = {s.unit.id: s.similarity for hits in lists.values() for s in hits if s.similarity is not None}
        first = rrf(
            {name: [Hit(id=s.unit.id, score=s.score) for s in hits] for name, hits in lists.items()},
            request.rrf_k,
            request.weights,
        )
        weights = dict(request.weights)
        if self.weight:
            best = sorted(first, key=lambda i: (-first[i], i))[: self.top]
            seeds = {i: first[i] for i in best}
            if self.named and request.words:
                asked = set(request.words)
                scope_keys = {s.key for s in request.scopes}
                for e, us in self.lab.graph.entity_units.items():
                    scope, name = e.split("\x1f", 1)
                    if scope in scope_keys and words(name) and set(words(name)) <= asked:
                        for u in us:
                            seeds[u] = seeds.get(u, 0.0) + self.named * max(first.values(), default=1.0) / len(us)
            p = self.lab.graph.ppr(seeds, self.alpha)
            ranked = sorted((u for u in p if u in self.lab.units), key=lambda u: (-p[u], u))[: request.fetch]
            for u in ranked:
                units.setdefault(u, self.lab.units[u])
            lists["ppr"] = [Scored(unit=units[u], score=p[u]) for u in ranked]
            weights["ppr"] = self.weight
        fused = rrf(
            {name: [Hit(id=s.unit.id, score=s.score) for s in hits] for name, hits in lists.items()},
            request.rrf_k,
            weights,
        )
        # a unit only PPR found has no similarity kept: it scores its fused share alone
        best = similar(fused, lambda ids: {i: sims[i] for i in ids if i in sims}, request)
        found = walk(request, [Scored(unit=units[i], score=score, similarity=sim) for i, score, sim in best], self.hop)
        return together(found, request.weights.get("conversation", 0.0), request.kept)


def objective(lab: Kept, answers: dict[str, list[str]], half: str) -> float:
    """What a setting is chosen by on one half: the mean of LoCoMo R@10 and MuSiQue R@5 and
    all-supports@10 (each set weighs the same)."""
    lq = [q for q in lab.lq if q.half == half]
    mq = [q for q in lab.mq if q.half == half]
    loc = np.mean([len(q.gold & set(answers[q.id][:10])) / len(q.gold) for q in lq])
    r5 = np.mean([len(q.gold & set(answers[q.id][:5])) / len(q.gold) for q in mq])
    all10 = np.mean([float(q.gold <= set(answers[q.id][:10])) for q in mq])
    return float((loc + (r5 + all10) / 2) / 2)


def crossed(lab: Kept, name: str, grid: list[dict], build, label: str) -> dict:
    """Choose on A, report on B; choose on B, report on A. ``build(setting)`` gives a replay."""
    base = lab.answers(lab.replay(), labels=(label,))[label]
    scored = []
    for setting in grid:
        ans = lab.answers(build(setting), labels=(label,))[label]
        scored.append((setting, ans, objective(lab, ans, "A"), objective(lab, ans, "B")))
        print(f"  {name} {label} {setting}: A {scored[-1][2]:.4f}  B {scored[-1][3]:.4f}", flush=True)
    print(f"  default {label}: A {objective(lab, base, 'A'):.4f}  B {objective(lab, base, 'B'):.4f}")
    out = {}
    for chosen_on, shown in (("A", "B"), ("B", "A")):
        i = 2 if chosen_on == "A" else 3
        setting, ans, *_ = max(scored, key=lambda s: s[i])
        print(f"\n{name} ({label}) chosen on {chosen_on}: {setting}; reported on {shown}")
        result = table({"default": base, name: ans}, lab.lq, lab.mq, base="default", halves=(shown,))
        print_result(result)
        out[f"chosen on {chosen_on}"] = {"setting": setting, "figures": result}
    return out


def ppr_experiment(lab: Kept, label: str = "hybrid") -> dict:
    grid = [
        {"weight": w, "top": t, "alpha": a, "named": n}
        for w, t, a, n in itertools.product((1.0, 2.0), (5, 10), (0.5, 0.8), (0.0, 1.0))
    ]

    def build(s):
        return lab.replay(PPRReplay, lab=lab, **s)

    return crossed(lab, "ppr", grid, build, label)


# -- learned fusion ---------------------------------------------------------------------------

LISTS = ("semantic", "lexical", "entities", "time", "speaker")


def features(replay: ListReplay, request) -> tuple[list[str], np.ndarray, dict]:
    """The candidates of a request's lists and their signals: per list 1/(1 + rank) and
    presence, the similarity (1 + cos) / 2 and its rank among the candidates."""
    from graphmem.domain.fusion import shared_ranks

    lists = replay.lists(request)
    units = {s.unit.id: s.unit for hits in lists.values() for s in hits}
    sims = {s.unit.id: s.similarity for hits in lists.values() for s in hits if s.similarity is not None}
    ids = sorted(units)
    col = {u: n for n, u in enumerate(ids)}
    x = np.zeros((len(ids), 2 * len(LISTS) + 3), np.float32)
    fused = rrf(
        {name: [Hit(id=s.unit.id, score=s.score) for s in hits] for name, hits in lists.items()},
        request.rrf_k,
        request.weights,
    )
    for u, v in fused.items():
        x[col[u], -3] = v  # the default's fused share (its weights, the event boost included)
    for j, name in enumerate(LISTS):
        hits = lists.get(name, [])
        for s, rank in zip(hits, shared_ranks([h.score for h in hits])):
            x[col[s.unit.id], 2 * j] = 1.0 / (1 + rank)
            x[col[s.unit.id], 2 * j + 1] = 1.0
    if sims:
        lo = min(sims.values())
        for u, v in sims.items():
            x[col[u], -2] = v - lo
        order = sorted(sims, key=lambda u: -sims[u])
        for r, u in enumerate(order, 1):
            x[col[u], -1] = 1.0 / r
    return ids, x, units


class LearnedReplay(ListReplay):
    """A replay that ranks the lists' candidates by a fitted linear model instead of RRF, then
    keeps the walk and the evidence clusters as they are."""

    def __init__(self, index, coef: np.ndarray, bias: float):
        super().__init__(index)
        self.coef, self.bias = coef, bias

    def recall(self, request):
        ids, x, units = features(self, request)
        if not ids:
            return []
        score = x @ self.coef + self.bias
        order = np.lexsort((np.array(ids), -score))[: request.depth]
        best = [Scored(unit=units[ids[i]], score=float(score[i])) for i in order]
        found = walk(request, best, self.hop)
        return together(found, request.weights.get("conversation", 0.0), request.kept)


def training_rows(lab: Kept, half: str):
    """Every candidate of every question of ``half`` (both sets), with whether it is gold;
    each question's rows weighted so every question counts once (and each set the same)."""
    replay = lab.replay()
    s = lab.kept["settings"]
    recaller = Recaller(replay, rrf_k=s["rrf_k"], weights=s["weights"])
    rows, labels, weights = [], [], []
    for qs in (lab.lq, lab.mq):
        mine = [q for q in qs if q.half == half]
        for q in mine:
            at = AsOf(valid=q.asked_at or lab.kept["now"], known=lab.kept["now"])
            window = find_window(q.text, at.valid)
            request = recaller.request(q.text, Scopes.scopes(q.subject, None, False), 10, at, (), "hybrid", window)
            ids, x, units = features(replay, request)
            if not ids:
                continue
            y = np.array([lab.doc_of(units[i].source.episode_id) in q.gold for i in ids], np.float32)
            rows.append(x)
            labels.append(y)
            weights.append(np.full(len(ids), 1.0 / (len(ids) * len(mine)), np.float32))
    return np.concatenate(rows), np.concatenate(labels), np.concatenate(weights)


def fit_logistic(x, y, w, l2=1e-3, steps=3000, lr=0.5):
    """Weighted logistic regression by gradient descent (numpy only)."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z = (x - mu) / sd
    coef, bias = np.zeros(x.shape[1]), 0.0
    w = w / w.sum()
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ coef + bias)))
        g = (p - y) * w
        coef -= lr * (z.T @ g + l2 * coef)
        bias -= lr * g.sum()
    return coef / sd, bias - float((coef / sd) @ mu)


def learned_experiment(lab: Kept, label: str = "hybrid") -> dict:
    out = {}
    base = lab.answers(lab.replay(), labels=(label,))[label]
    for chosen_on, shown in (("A", "B"), ("B", "A")):
        x, y, w = training_rows(lab, chosen_on)
        coef, bias = fit_logistic(x, y, w)
        names = [f"{n}{k}" for n in LISTS for k in ("_rr", "_in")] + ["fused", "sim", "sim_rr"]
        print(f"\nlearned fusion fitted on {chosen_on}: " + ", ".join(f"{n} {c:+.2f}" for n, c in zip(names, coef)))
        ans = lab.answers(lab.replay(LearnedReplay, coef=coef, bias=bias), labels=(label,))[label]
        result = table({"default": base, "learned": ans}, lab.lq, lab.mq, base="default", halves=(shown,))
        print_result(result)
        out[f"fitted on {chosen_on}"] = {"coef": dict(zip(names, map(float, coef))), "figures": result}
    return out


def run(kept: dict, args) -> None:
    lab = Kept(kept)
    base = lab.answers(lab.replay())
    agree = np.mean([base["hybrid"][q] == kept["answers"]["hybrid"][q] for q in base["hybrid"]])
    print(f"offline replay agrees with the statement's top 10 on {agree:.1%} of questions (hybrid)")
    results = {}
    which = getattr(args, "only", None) or ["learned", "ppr"]
    if "second" in which:
        for model in args.second_models:
            results[f"second {model}"] = second_stage_experiment(lab, model)
    if "learned" in which:
        results["learned"] = learned_experiment(lab)
    if "ppr" in which:
        results["ppr"] = ppr_experiment(lab)
    if args.json:
        print(json.dumps(results, default=str))
    _ = math


# -- second stage: a stronger bi-encoder re-scoring the fused candidates at question time -----


def second_stage_experiment(lab: Kept, model: str, depths=(20, 50), label: str = "hybrid") -> dict:
    """The default's ``depth`` best, re-ranked by reciprocal rank fusion of their fused order
    and ``model``'s similarity with the question (weight w on the latter, chosen on one half):
    a second stage whose cost falls on recall (``depth`` texts embedded per question, cached
    by text) instead of on ingest."""
    import time

    from _onnx_bert import OnnxBertEmbedder
    from _recall import DiskVectors

    inner = OnnxBertEmbedder(model)
    inner.load()
    docs = DiskVectors(inner)
    from recall_lab import QueryView

    queries = DiskVectors(QueryView(inner))
    s = lab.kept["settings"]
    recaller = Recaller(lab.replay(), rrf_k=s["rrf_k"], weights=s["weights"])
    out = {}
    base = lab.answers(lab.replay(), labels=(label,))[label]
    for depth in depths:
        cands: dict[str, list] = {}
        for qs in (lab.lq, lab.mq):
            for q in qs:
                at = AsOf(valid=q.asked_at or lab.kept["now"], known=lab.kept["now"])
                hits = recaller.recall(
                    q.text, Scopes.scopes(q.subject, None, False), depth, at=at, hops=0, mode="hybrid"
                )
                cands[q.id] = [(lab.doc_of(h.unit.source.episode_id), h.unit.content) for h in hits]
        # cost: a cold question's candidates embedded (the first 50 questions, timed)
        timed = list(cands.items())[:50]
        fresh = OnnxBertEmbedder(model)
        fresh.load()
        started = time.perf_counter()
        for _, cs in timed:
            fresh.embed([c for _, c in cs])
        ms = 1000 * (time.perf_counter() - started) / len(timed)
        texts = {q.id: q.text for q in [*lab.lq, *lab.mq]}
        qv = dict(zip(texts, queries.embed(list(texts.values()))))
        sims = {}
        for qid, cs in cands.items():
            dv = np.asarray(docs.embed([c for _, c in cs]))
            sims[qid] = dv @ np.asarray(qv[qid]) if len(cs) else np.zeros(0)
        docs.save()
        queries.save()

        def ranked(w, cands=cands, sims=sims):
            ans = {}
            for qid, cs in cands.items():
                order = np.argsort(-sims[qid], kind="stable")
                srank = np.empty(len(cs))
                srank[order] = np.arange(1, len(cs) + 1)
                score = [1 / (1 + i) + w / (1 + srank[i]) for i in range(len(cs))]
                ans[qid] = [cs[i][0] for i in sorted(range(len(cs)), key=lambda i: -score[i])][:10]
            return ans

        grid = {w: ranked(w) for w in (0.25, 0.5, 1.0, 2.0, 4.0, 1000.0)}
        for w, ans in grid.items():
            print(
                f"  second stage {model} depth {depth} w {w}: "
                f"A {objective(lab, ans, 'A'):.4f} B {objective(lab, ans, 'B'):.4f}"
            )
        print(f"  second stage {model} depth {depth}: {ms:.0f} ms a question to embed its candidates cold")
        for chosen_on, shown in (("A", "B"), ("B", "A")):
            w = max(grid, key=lambda w: objective(lab, grid[w], chosen_on))
            print(f"\nsecond stage {model}, depth {depth}, w {w} chosen on {chosen_on}; reported on {shown}")
            result = table({"default": base, "2nd": grid[w]}, lab.lq, lab.mq, base="default", halves=(shown,))
            print_result(result)
            out[f"depth {depth} chosen on {chosen_on}"] = {"w": w, "ms": ms, "figures": result}
    return out
