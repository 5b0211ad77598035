// The memory browser: a thin client of the /v1 API. Memory text is untrusted, so every piece of
// it reaches the page through textContent (never innerHTML); the key lives in sessionStorage only.
"use strict";

const KEY = "graphmem.key";
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  for (const child of children) node.append(child instanceof Node ? child : String(child ?? ""));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function status(text, isError) {
  const line = $("status");
  line.textContent = text;
  line.className = isError ? "error" : "muted";
}

function day(iso) {
  return iso ? iso.slice(0, 10) : "…";
}

// -- the API ----------------------------------------------------------------------------------
async function api(method, path, body) {
  const headers = {"Accept": "application/json"};
  const key = sessionStorage.getItem(KEY);
  if (key) headers["Authorization"] = "Bearer " + key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = data.error || {};
    throw new Error(`${response.status} ${error.code || ""}: ${error.message || response.statusText}`);
  }
  return data;
}

function subjectPath(suffix, params) {
  const subject = $("subject").value.trim();
  if (!subject) throw new Error("choose a subject first");
  const query = new URLSearchParams(params || {});
  const project = $("project").value.trim();
  if (project) query.set("project", project);
  const tail = query.toString();
  return `/v1/subjects/${encodeURIComponent(subject)}${suffix}${tail ? "?" + tail : ""}`;
}

// A failed request leaves nothing of the last answers on screen: what shows is what this key
// may read now (a bad or revoked key must not leave the previous key's memory in view).
async function run(what, work) {
  try {
    status(what + "…");
    await work();
  } catch (error) {
    clearResults();
    status(error.message, true);
  }
}

function clearResults() {
  $("hits").replaceChildren();
  $("verdict").hidden = true;
  const box = $("explanation");
  box.className = "muted";
  box.textContent = 'Choose "explain" on a hit.';
  $("timeline-chart").replaceChildren();
  $("decisions").tBodies[0].replaceChildren();
  nextCursor = null;
  $("decisions-more").hidden = true;
  $("entity-list").tBodies[0].replaceChildren();
  entitiesCursor = null;
  $("entities-more").hidden = true;
  $("entity-view").replaceChildren();
}

// -- key and subject --------------------------------------------------------------------------
async function useKey(event) {
  if (event) event.preventDefault();
  const typed = $("key").value.trim();
  if (typed) sessionStorage.setItem(KEY, typed);
  $("key").value = "";
  clearResults();  // another key may read other subjects: nothing of the last one's stays
  await run("checking the key", async () => {
    const {key} = await api("GET", "/v1/me");
    const list = $("subjects");
    list.replaceChildren();
    if (key === null) {
      $("whoami").textContent = "server without keys: any subject";
    } else {
      $("whoami").textContent = `key ${key.id}` + (key.admin ? " (admin: any subject)" : "");
      for (const subject of key.subjects) list.append(el("option", {value: subject}));
      if (!$("subject").value && key.subjects.length) $("subject").value = key.subjects[0];
    }
    status("ready");
  });
}

function forgetKey() {
  sessionStorage.removeItem(KEY);
  clearResults();
  $("whoami").textContent = "";
  $("subjects").replaceChildren();
  status("key forgotten");
}

// -- search -----------------------------------------------------------------------------------
function optional(id) {
  const value = $(id).value.trim();
  return value || null;
}

async function search(event) {
  event.preventDefault();
  await run("searching", async () => {
    const body = {query: $("query").value, k: Number($("k").value) || 10, hops: Number($("hops").value),
                  as_of: optional("as-of"), known_at: optional("known-at")};
    const {hits, relevant} = await api("POST", subjectPath("/recall"), body);
    const list = $("hits");
    list.replaceChildren();
    // Below the threshold the hits are still listed, dimmed, under the verdict: nothing hidden.
    $("verdict").hidden = relevant || !hits.length;
    hits.forEach((hit, i) => list.append(hitItem(hit, relevant, i + 1)));
    const when = body.as_of ? ` as of ${body.as_of}` : "";
    status(`${hits.length} hit(s)${when}${relevant ? "" : ", nothing relevant found"}`);
  });
}

// Relevance as a person reads it: the calibrated confidence, or the rank when a hit has none
// (never the raw fusion score, whose scale means nothing outside one answer).
function relevance(hit, rank) {
  return typeof hit.confidence === "number" ? `confidence ${Math.round(100 * hit.confidence)}%` : `rank ${rank}`;
}

function hitItem(hit, relevant, rank) {
  const item = el("li", {class: relevant ? "hit" : "hit irrelevant"});
  item.append(el("div", {class: "content"}, hit.content));
  item.append(el("div", {class: "meta"},
    `${hit.kind} · `, el("span", {class: "relevance"}, relevance(hit, rank)),
    ` · true ${day(hit.valid_at)} → ${day(hit.invalid_at)}`
    + ` · known ${day(hit.created_at)} → ${day(hit.expired_at)}`));
  if (hit.path && hit.path.length > 1) item.append(el("div", {class: "path"}, "via " + hit.path.join(" → ")));
  const explain = el("button", {type: "button", class: "explain"}, "explain");
  explain.addEventListener("click", () => showExplanation(hit.id));
  item.append(explain);
  return item;
}

// -- explanation ------------------------------------------------------------------------------
async function showExplanation(unitId) {
  await run("explaining", async () => {
    const info = await api("GET", subjectPath(`/units/${encodeURIComponent(unitId)}`));
    const box = $("explanation");
    box.className = "";
    box.replaceChildren();
    const unit = info.unit;
    box.append(el("p", {class: "content"}, unit.content));
    box.append(el("p", {class: "meta"}, `true ${day(unit.time.valid_at)} → ${day(unit.time.invalid_at)} · known `
      + `${day(unit.time.created_at)} → ${day(unit.time.expired_at)} · extractor ${info.extractor_version}`));
    if (info.episode) box.append(el("blockquote", {}, info.episode.raw));
    const decisions = el("ul", {class: "decisions"});
    for (const d of info.decisions) decisions.append(el("li", {}, `${d.op} ${day(d.decided_at)}: ${d.reason}`
      + (d.actor ? ` (by ${d.actor})` : "")));
    for (const e of info.incoming) decisions.append(el("li", {}, `invalidated ${day(e.expired_at)}: ${e.reason}`));
    box.append(decisions);
    if (unit.triple) {
      const timeline = el("button", {type: "button", class: "open-timeline"}, `timeline of ${unit.triple.subject}`);
      timeline.addEventListener("click", () => { $("entity").value = unit.triple.subject; showTimeline(); });
      box.append(timeline);
    }
    status("explained");
  });
}

// -- timeline ---------------------------------------------------------------------------------
// retracted: a DELETE decision took it back (or it stopped being believed with no world end);
// superseded: its world time ended (a later value began) or a redrawn stretch replaced it.
function stateOf(entry) {
  const retracted = entry.decisions.some((d) => d.op === "DELETE" && d.target_id === entry.id);
  if (retracted || (!entry.believed && !entry.invalid_at)) return "retracted";
  if (!entry.believed || (entry.invalid_at && Date.parse(entry.invalid_at) <= Date.now())) return "superseded";
  return "current";
}

async function showTimeline(event) {
  if (event) event.preventDefault();
  await run("drawing the timeline", async () => {
    const params = {entity: $("entity").value.trim(), include_expired: "true"};
    const known = optional("timeline-known-at");
    if (known) params.known_at = known;
    const {entries} = await api("GET", subjectPath("/history", params));
    $("timeline-chart").replaceChildren(drawTimeline(entries));
    status(`${entries.length} value(s) on the timeline`);
  });
}

function drawTimeline(entries) {
  if (!entries.length) return el("p", {class: "muted"}, "no history for this entity");
  const times = [];
  for (const e of entries) {
    for (const t of [e.valid_at, e.invalid_at, e.created_at, e.expired_at]) if (t) times.push(Date.parse(t));
    for (const d of e.decisions) times.push(Date.parse(d.decided_at));
  }
  const low = Math.min(...times);
  const high = Math.max(...times, Date.now());
  const span = Math.max(high - low, 86400000);
  const left = 230, width = 640, row = 26;
  const x = (t) => left + ((t - low) / span) * width;
  const slots = [...new Set(entries.map((e) => e.slot))];
  const height = (entries.length + slots.length) * row + 40;
  const chart = svg("svg", {width: left + width + 20, height, viewBox: `0 0 ${left + width + 20} ${height}`,
                            role: "img", "aria-label": "timeline"});
  let y = 10;
  for (const slot of slots) {
    chart.append(svg("text", {x: 4, y: y + 16, class: "slot"}, slot || "(no slot)"));
    y += row;
    for (const entry of entries.filter((e) => e.slot === slot)) {
      const state = stateOf(entry);
      const start = x(Date.parse(entry.valid_at || entry.created_at));
      const end = entry.invalid_at ? x(Date.parse(entry.invalid_at)) : left + width;
      const bar = svg("rect", {x: start, y: y + 4, width: Math.max(end - start, 2), height: row - 10,
                               class: `bar ${state}`, "data-unit": entry.id});
      bar.append(svg("title", {}, `${entry.content}: true ${day(entry.valid_at)} → ${day(entry.invalid_at)} (${state})`));
      const label = entry.content.length > 34 ? entry.content.slice(0, 33) + "…" : entry.content;
      chart.append(svg("text", {x: 14, y: y + 16, class: `value ${state}`}, label));
      chart.append(bar);
      for (const d of entry.decisions) {
        const cx = x(Date.parse(d.decided_at)), cy = y + row / 2;
        const mark = svg("polygon", {points: `${cx},${cy - 6} ${cx + 5},${cy} ${cx},${cy + 6} ${cx - 5},${cy}`,
                                     class: `decision ${d.op.toLowerCase()}`});
        mark.append(svg("title", {}, `${d.op} at ${d.decided_at}: ${d.reason}` + (d.actor ? ` (by ${d.actor})` : "")));
        chart.append(mark);
      }
      y += row;
    }
  }
  chart.append(svg("line", {x1: left, y1: y + 4, x2: left + width, y2: y + 4, class: "axis"}));
  for (let i = 0; i <= 4; i++) {
    const t = low + (span * i) / 4;
    chart.append(svg("line", {x1: x(t), y1: y + 1, x2: x(t), y2: y + 7, class: "axis"}));
    chart.append(svg("text", {x: x(t), y: y + 20, class: i === 0 ? "tick" : i === 4 ? "tick end" : "tick middle"},
                     day(new Date(t).toISOString())));
  }
  return chart;
}

// -- entities ---------------------------------------------------------------------------------
const ENTITY_PAGE = 20;
let entitiesCursor = null;

async function listEntities(event, more) {
  if (event) event.preventDefault();
  await run("listing entities", async () => {
    const params = {limit: String(ENTITY_PAGE)};
    const prefix = $("entity-prefix").value.trim();
    if (prefix) params.prefix = prefix;
    if (more && entitiesCursor) params.cursor = entitiesCursor;
    const page = await api("GET", subjectPath("/entities", params));
    const body = $("entity-list").tBodies[0];
    if (!more) body.replaceChildren();
    for (const e of page.entities) {
      const open = el("button", {type: "button", class: "entity-open"}, e.name);
      open.addEventListener("click", () => showEntity(e.name));
      body.append(el("tr", {}, el("td", {}, open), el("td", {}, e.aliases.join(", ")), el("td", {class: "facts"}, e.facts),
                     el("td", {}, e.last_change ? e.last_change.slice(0, 19).replace("T", " ") : "")));
    }
    entitiesCursor = page.next_cursor;
    $("entities-more").hidden = !entitiesCursor;
    status(`${body.rows.length} entit${body.rows.length === 1 ? "y" : "ies"}`);
  });
}

async function showEntity(name) {
  await run("reading the entity", async () => {
    const info = await api("GET", subjectPath(`/entities/${encodeURIComponent(name)}`));
    const e = info.entity;
    const view = $("entity-view");
    const facts = el("ul", {id: "entity-facts"});
    for (const u of info.facts) {
      facts.append(el("li", {}, el("span", {class: "content"}, u.content),
                      el("span", {class: "meta"}, ` true ${day(u.time.valid_at)} → ${day(u.time.invalid_at)}`)));
    }
    if (!info.facts.length) facts.append(el("li", {class: "muted"}, "no fact about it holds now"));
    const also = e.aliases.length ? ` (also written ${e.aliases.join(", ")})` : "";
    view.replaceChildren(el("h3", {id: "entity-name"}, e.name + also), facts,
                         el("div", {id: "entity-chart"}, drawTimeline(info.history)));
    status(`${e.name}: ${info.facts.length} fact(s) hold now, ${info.history.length} on the timeline`);
  });
}

// -- decision log -----------------------------------------------------------------------------
let nextCursor = null;

async function loadDecisions(more) {
  await run("reading the decision log", async () => {
    const params = {limit: "50"};
    if (more && nextCursor) params.cursor = nextCursor;
    const page = await api("GET", subjectPath("/decisions", params));
    const body = $("decisions").tBodies[0];
    if (!more) body.replaceChildren();
    for (const d of page.decisions) {
      const facts = [d.produced_fact || d.candidate, d.target_fact && `→ ${d.target_fact}`].filter(Boolean).join(" ");
      body.append(el("tr", {}, el("td", {}, d.decided_at.slice(0, 19).replace("T", " ")), el("td", {class: "op"}, d.op),
                     el("td", {}, facts), el("td", {}, d.reason), el("td", {}, d.actor || "")));
    }
    nextCursor = page.next_cursor;
    $("decisions-more").hidden = !nextCursor;
    status(`${body.rows.length} decision(s)`);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  $("key-form").addEventListener("submit", useKey);
  $("key-forget").addEventListener("click", forgetKey);
  $("search-form").addEventListener("submit", search);
  $("timeline-form").addEventListener("submit", showTimeline);
  $("decisions-go").addEventListener("click", () => loadDecisions(false));
  $("decisions-more").addEventListener("click", () => loadDecisions(true));
  $("entities-form").addEventListener("submit", (event) => listEntities(event, false));
  $("entities-more").addEventListener("click", () => listEntities(null, true));
  // Another subject's answers are not this one's: a change of subject starts from nothing.
  for (const id of ["subject", "project"]) $(id).addEventListener("change", clearResults);
  if (sessionStorage.getItem(KEY)) useKey();
});
