"""After an erasure: push the deleted values out of Neo4j's transaction logs.

A committed DETACH DELETE does not remove the deleted text from disk. Measured on the local
server (Neo4j 2026.02.2 Community with the settings graphmem.server.local writes: remember a
text holding a unique string, forget its subject, grep the instance folder; the test
tests/neo4j/test_erasure_on_disk.py does this on every run), the string stays in:

- the transaction log being written (the creating and the deleting transaction both hold it),
  until that log is closed (it rotates at 128 KiB) and a checkpoint prunes it (no closed log
  is kept): gone within about 10 s of ``flush_erased``, present until then;
- the property store's string file (whole texts) and array file (an entity's word list): the
  freed records keep their bytes until a later write happens to reuse them, which Neo4j allows
  a few seconds after the freeing transaction at the earliest (on an idle server, a flush 0 or
  1 s after the erasure reused none of them, one 3 s after reused them all; on a server where
  other deletions had freed records too, one 5 s after reused none of them);
- range-index pages: the subject id (every scope and subject index) and entity names in their
  normalised form, until the page is rewritten;
- Lucene segments: the fulltext index marks the document deleted and its words stay in the
  segment's term dictionary (lower-cased) until Lucene merges the segment, which it does soon
  for a segment of deleted documents only, later when it holds other subjects' entries. The
  vector index likewise keeps the deleted embedding, and the scope it filters on, in its
  segment until a merge.

Nothing was found in logs/ (debug.log, security.log) or any other file. The strongest purge
Community allows is a fresh store: docs/security.md ("A full purge") gives the procedure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.errors import BackendError
from graphmem.server.local import TX_LOG_ROTATION_KIB

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection

__all__ = ["flush_erased"]

_NO_PROCEDURE = "Neo.ClientError.Procedure.ProcedureNotFound"

# Each filler transaction (the node's creation, then its deletion) logs more than the rotation
# size, so each closes the log it was written to. Neo4j 2026.02 then prunes every log before the
# one holding the checkpoint; 5.26 keeps one more (measured: after one round its checkpoint found
# nothing to prune). Two rounds close four logs, enough for both.
_FILLER = "." * (TX_LOG_ROTATION_KIB * 1024)
_ROUNDS = 2


def flush_erased(conn: Neo4jConnection) -> bool:
    """Make the transaction log that holds an erasure's deleted values prunable, and checkpoint.

    Call it after the erasure has committed. It writes, then deletes, throwaway nodes whose
    values are larger than the log rotation size, so the log holding the erased values is
    closed and others after it (the freed store records are not its business: see above).
    Then it asks for a checkpoint, which prunes closed logs. ``GraphMem.forget`` calls it
    (``Database.flush_erased``).

    Returns True when the server checkpointed on request (``db.checkpoint()``, Enterprise
    editions), False when it has no such procedure (Community, as the local server): there
    the server checkpoints on its own schedule, which the local server's configuration sets to
    within about 10 s of a write.

    Raises BackendError (or Unavailable) when Neo4j fails.

    Example::

        lifecycle.forget(Neo4jStore(conn), "user", "alice")  # graphmem.pipelines.lifecycle
        flush_erased(conn)
    """
    for _ in range(_ROUNDS):
        conn.write("admin/write_log_filler", pad=_FILLER)
        conn.write("admin/delete_log_filler")
    try:
        conn.write("admin/checkpoint")
    except BackendError as exc:
        if getattr(exc.__cause__, "code", None) == _NO_PROCEDURE:
            return False
        raise
    return True
