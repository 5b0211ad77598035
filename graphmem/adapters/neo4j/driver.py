"""The Neo4j connection: named queries, read/write routing, retries, error mapping.

Reads go through ``execute_read`` and writes through ``execute_write``, so on a cluster or
Aura (``neo4j+s://``) reads are routed to readers and writes to the leader. Both retry what
the driver calls retryable (deadlocks, leader switches, a dropped connection) with bounded
exponential backoff, but a server found gone fails at once (``Neo4jConnection._transaction``);
transaction functions here are pure functions of their inputs, so a retried attempt does
exactly what the first would have.

A query file's ``mode`` is enforced: inside ``read``/``read_tx`` only read queries run, inside
``write``/``write_tx`` read and write queries, and schema files only through ``schema``; any
other use raises ``ConfigurationError`` naming the file before the query is sent.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar
from urllib.parse import urlsplit

import neo4j
from neo4j import GraphDatabase, ManagedTransaction
from neo4j import exceptions as neo4j_errors
from neo4j.vector import Vector
from prometheus_client import Counter, Gauge

from graphmem.adapters.neo4j.migrations import migrate
from graphmem.adapters.neo4j.queries import Query, load
from graphmem.errors import BackendError, ConfigurationError, Conflict, GraphMemError, InvalidInput, Unavailable
from graphmem.settings.config import DEFAULT_BOLT_PORT, Settings
from graphmem.settings.credentials import local_password, own_port, password_file

T = TypeVar("T")

#: Codes a concurrent creator of the same schema rule produces (see ``schema``).
SCHEMA_RACES = {
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
    "Neo.ClientError.Schema.ConstraintAlreadyExists",
}

#: A retried transaction's first pause, doubled after each attempt and varied by ``JITTER``
#: (the driver's own defaults).
FIRST_DELAY, JITTER = 1.0, 0.2
#: What a server that cannot be reached raises.
UNREACHABLE = (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired)

#: What ``GET /metrics`` shows of the connection (graphmem.http.metrics): transactions tried
#: again, the times Neo4j was found unreachable, and whether it is marked so now.
RETRIES = Counter("graphmem_neo4j_retries", "Neo4j transactions tried again after a retryable error")
OUTAGES = Counter("graphmem_neo4j_unreachable_periods", "Times Neo4j was found unreachable after its retries")
DOWN = Gauge("graphmem_neo4j_unreachable", "1 while Neo4j is marked unreachable", multiprocess_mode="livemax")

#: Seconds to open one connection: a server that does not answer in that time is down (the
#: driver's default, 30 s, made a refused or unknown host take a minute to report).
CONNECT_TIMEOUT = 5.0

#: Query modes each kind of transaction may run.
ALLOWED_MODES = {"read": ("read",), "write": ("read", "write")}

#: The kind of transaction the current transaction function runs in (``read_tx``/``write_tx``
#: set it around the function, which the driver calls on this thread).
_ACCESS: ContextVar[str] = ContextVar("graphmem_access", default="write")


def unreachable(uri: str, exc: Exception) -> str:
    """Why Neo4j at ``uri`` cannot be used, for an operator: the URI and the driver's reason;
    `graphmem db start` is suggested only where it could help, a local bolt:// URI."""
    parts = urlsplit(uri)
    hint = ""
    if parts.scheme == "bolt" and parts.hostname in ("127.0.0.1", "localhost", "::1"):
        port = f" --port {parts.port}" if parts.port and parts.port != DEFAULT_BOLT_PORT else ""
        hint = f"; is it running? try `graphmem db start{port}`"
    # The driver wraps the socket's reason in two sentences of addresses; the reason says it.
    reason = re.search(r"\(reason ([^)]*)\)", str(exc))
    return f"Neo4j at {uri} is unreachable ({reason.group(1) if reason else exc}){hint}"


#: What a refused login says when the caller knows no more (Neo4jConnection says which
#: password it sent).
_REFUSED = (
    "refused the credentials: set NEO4J_USER/NEO4J_PASSWORD (a local server's password is in "
    "<GRAPHMEM_HOME>/instances/<port>/password, read when NEO4J_PASSWORD is empty)"
)


#: Neo4j's answer to any login after several refused ones in a row.
_LOCKED_OUT = "Neo.ClientError.Security.AuthenticationRateLimit"


def _who(what: str, uri: str | None) -> str:
    return f"Neo4j at {uri}" if uri else f"{what}: Neo4j"


@contextmanager
def mapped_errors(what: str, uri: str | None = None, refused: str = _REFUSED) -> Iterator[None]:
    """Translate driver exceptions into graphmem's tree, keeping the cause. An unreachable
    server is named by ``uri`` (when given), not by the query that found it out; a refused
    login says ``refused``: which password was sent and what to do."""
    try:
        yield
    except GraphMemError:
        raise
    except neo4j_errors.ConstraintError as exc:
        raise Conflict(f"{what}: {exc.message}") from exc
    except UNREACHABLE as exc:
        raise Unavailable(unreachable(uri, exc) if uri else f"{what}: Neo4j is unreachable ({exc})") from exc
    except neo4j_errors.AuthError as exc:
        raise Unavailable(f"{_who(what, uri)} {refused}") from exc
    except neo4j_errors.CypherTypeError as exc:
        raise InvalidInput(f"{what}: {exc.message}") from exc
    except neo4j_errors.Neo4jError as exc:
        if exc.code == _LOCKED_OUT:
            raise Unavailable(
                f"{_who(what, uri)} refuses every login for a few seconds after several refused "
                f"ones in a row (try again; if it refuses again, it {refused})"
            ) from exc
        raise BackendError(f"{what}: {exc.code}: {exc.message}") from exc
    except neo4j_errors.DriverError as exc:
        raise BackendError(f"{what}: {exc}") from exc


class Listed(list[Any]):
    """A list parameter, sent as the list it is and shown by its length. The driver formats
    every statement's parameters for its debug log even when that log is off (``neo4j`` 6.4,
    Bolt RUN): a write's rows and their vectors (1,000 of 384 floats) took longer to format
    than to send."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


class Embedding(list[float]):
    """A vector parameter: sent as its float32 bytes in one value where the server takes that
    (Bolt 6, ``neo4j.vector.Vector``), else as a list. A list goes as one number at a time
    and the server decodes each: a write of 1,000 vectors of 384 took ~180 ms more so than as
    bytes (2026.02.2). Stored vectors are float32 either way (``db.create.setNodeVectorProperty``)."""

    __slots__ = ()


#: Whether the current transaction's server takes vectors as bytes (``read_tx``/``write_tx``).
_PACKED: ContextVar[bool] = ContextVar("graphmem_packed", default=False)


def _quiet(value: Any) -> Any:
    """The value with every list, also inside maps (a recall's question vectors are), made a
    ``Listed``: a map's repr shows its values, a ``Listed`` only its length; an ``Embedding``
    packed as bytes where the server takes them."""
    if isinstance(value, dict):
        return {key: _quiet(item) for key, item in value.items()}
    if isinstance(value, Embedding) and _PACKED.get():
        return Vector(value, "f32")
    return Listed(value) if isinstance(value, list) else value


def run(tx: ManagedTransaction, name: str | Query, /, **params: Any) -> list[dict[str, Any]]:
    """Run a named query (or an already rendered one) inside a transaction function and return
    its rows as dicts. Raises ``ConfigurationError`` when the file's mode is not allowed in this
    transaction."""
    query = load(name) if isinstance(name, str) else name
    if query.values:
        raise ConfigurationError(f"{query.path}: render its values first ({', '.join(sorted(query.values))})")
    access = _ACCESS.get()
    if query.mode not in ALLOWED_MODES[access]:
        raise ConfigurationError(f"{query.path}: a {query.mode} query cannot run in a {access} transaction")
    params = _quiet(params)
    # dict(record), not record.data(): data() copies every nested map and list to turn nodes
    # into dicts, a tenth of a recall's client time, and the queries return maps, not nodes
    # (a node still reads as a mapping).
    return [dict(record) for record in tx.run(query.text, params)]


def _name(query: str | Query) -> str:
    return query if isinstance(query, str) else query.name


def _as(access: str, packed: bool, fn: Callable[[ManagedTransaction], T]) -> Callable[[ManagedTransaction], T]:
    """``fn`` run with ``access`` as the current transaction kind (checked by ``run``) and
    ``packed`` saying how it sends an ``Embedding``."""

    def work(tx: ManagedTransaction) -> T:
        access_token, packed_token = _ACCESS.set(access), _PACKED.set(packed)
        try:
            return fn(tx)
        finally:
            _ACCESS.reset(access_token)
            _PACKED.reset(packed_token)

    return work


class Neo4jConnection:
    """One driver per process; cheap sessions per call."""

    def __init__(self, settings: Settings, driver: neo4j.Driver | None = None):
        self.settings = settings
        self.database = settings.neo4j_database
        user, password = settings.neo4j_user, settings.neo4j_password.get_secret_value()
        kept = password_file(settings.neo4j_uri, settings.home)
        resolver = None
        elsewhere = "(a server started with another GRAPHMEM_HOME?): set GRAPHMEM_HOME to its home, or NEO4J_PASSWORD"
        if password:
            self._refused = (
                "refused the user and password given (--user/--password or NEO4J_USER/NEO4J_PASSWORD): correct them"
            )
        elif local := local_password(settings.neo4j_uri, settings.home):
            if user != "neo4j":  # the file holds the neo4j user's password, nobody else's
                raise ConfigurationError(
                    f"NEO4J_USER is {user} but no password is given: {kept} holds the "
                    "neo4j user's; set NEO4J_PASSWORD too, or leave NEO4J_USER unset"
                )
            password = local  # a server from `graphmem db start` keeps it there
            self._refused = f"refused the password in {kept} {elsewhere}"
            # That server runs as this user: the password goes to no other user's listener.
            resolver = own_port
        elif kept is not None:
            self._refused = f"asks for a password and {kept} does not exist {elsewhere}"
        else:
            self._refused = "asks for a password: set NEO4J_USER/NEO4J_PASSWORD"
        auth = (user, password) if password else None
        try:
            self.driver = driver or GraphDatabase.driver(
                settings.neo4j_uri,
                auth=auth,
                # One attempt per call: ``_transaction`` retries, as the driver would, but first
                # asks whether the server is there at all.
                max_transaction_retry_time=0,
                connection_timeout=CONNECT_TIMEOUT,
                # Warnings such as "label does not exist yet" are noise on a fresh database.
                notifications_min_severity="OFF",
                resolver=resolver,  # type: ignore[arg-type]  # None is the driver's default; its hint omits it
            )
        except neo4j_errors.ConfigurationError as exc:  # what the URI carries beyond host and port
            raise ConfigurationError(f"Neo4j URI {settings.neo4j_uri}: {exc}") from exc
        # Every session of this connection shares one bookmark manager, so on a cluster with
        # read routing a read is served by a member that has seen this process's last write.
        self.bookmarks = GraphDatabase.bookmark_manager()
        self._packed: bool | None = None
        # Set when a transaction found the server unreachable after its retries; cleared when
        # a connection opens again.
        self._unreachable = False

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Neo4jConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, name: str | Query, /, **params: Any) -> list[dict[str, Any]]:
        return self.read_tx(lambda tx: run(tx, name, **params), what=_name(name))

    def write(self, name: str | Query, /, **params: Any) -> list[dict[str, Any]]:
        return self.write_tx(lambda tx: run(tx, name, **params), what=_name(name))

    def _session(self) -> neo4j.Session:
        return self.driver.session(database=self.database, bookmark_manager=self.bookmarks)

    def read_tx(self, fn: Callable[[ManagedTransaction], T], what: str) -> T:
        return self._transaction("read", fn, what)

    def write_tx(self, fn: Callable[[ManagedTransaction], T], what: str) -> T:
        return self._transaction("write", fn, what)

    def _transaction(self, access: str, fn: Callable[[ManagedTransaction], T], what: str) -> T:
        # While the server was last found unreachable, one connection attempt comes first: a
        # server still down is reported at once, not after another retry loop (a long-running
        # face such as `graphmem serve` would otherwise hold every request that long).
        if self._unreachable:
            self.verify()
            self._unreachable = False
            DOWN.set(0)
        deadline = time.monotonic() + self.settings.neo4j_retry_seconds
        delay = FIRST_DELAY
        try:
            with mapped_errors(what, self.settings.neo4j_uri, self._refused):
                while True:
                    try:
                        with self._session() as session:
                            execute = session.execute_read if access == "read" else session.execute_write
                            return execute(_as(access, self._packs_vectors(), fn))
                    except (neo4j_errors.DriverError, neo4j_errors.Neo4jError) as exc:
                        # The driver's retry loop cannot tell a server that is gone from one
                        # that dropped a connection or switched leaders: it waited out the
                        # whole budget (30 s) on every request after a crash. One connection
                        # attempt tells them apart.
                        gone = isinstance(exc, UNREACHABLE) and not self._reachable()
                        if gone or not exc.is_retryable() or time.monotonic() + delay > deadline:
                            raise
                    RETRIES.inc()
                    time.sleep(delay * random.uniform(1 - JITTER, 1 + JITTER))
                    delay *= 2
        except Unavailable as exc:
            # Only a connection that opens clears it (above), never another error.
            if isinstance(exc.__cause__, UNREACHABLE):
                if not self._unreachable:
                    OUTAGES.inc()
                    DOWN.set(1)
                self._unreachable = True
            raise

    def _reachable(self) -> bool:
        try:
            self.driver.verify_connectivity()
        except (neo4j_errors.DriverError, neo4j_errors.Neo4jError, OSError):
            return False
        return True

    def _packs_vectors(self) -> bool:
        """Whether the server takes an ``Embedding`` as bytes (Bolt 6.0 and later), asked once."""
        if self._packed is None:
            self._packed = self.driver.get_server_info().protocol_version >= (6, 0)
        return self._packed

    def schema(self, text: str, what: str) -> None:
        """Run one schema statement in an auto-commit transaction (Neo4j requires it).
        Idempotent: when a concurrent process created the same index or constraint first,
        Neo4j reports an equivalent rule despite IF NOT EXISTS; that is success."""
        with (
            mapped_errors(what, self.settings.neo4j_uri, self._refused),
            self.driver.session(database=self.database) as session,
        ):
            try:
                session.run(text).consume()
            except neo4j_errors.ClientError as exc:
                if exc.code not in SCHEMA_RACES:
                    raise

    def verify(self) -> None:
        """One connection attempt, without the retries of a transaction (half a minute and
        more): a server that is down or refuses the credentials is reported at once."""
        with mapped_errors("connect", self.settings.neo4j_uri, self._refused):
            self.driver.verify_connectivity()

    def server_version(self) -> tuple[str, str]:
        self.verify()
        row = self.read("admin/server_version")[0]
        return row["version"], row["edition"]

    def migrate(self) -> tuple[list[str], list[str]]:
        """Apply pending numbered migrations (``graphmem.adapters.neo4j.migrations``); returns (applied now,
        already applied)."""
        self.verify()
        return migrate(self)
