"""After an erasure: push the deleted values out of Neo4j's transaction logs.

A committed DETACH DELETE leaves the deleted text on disk: in the transaction log being written,
until it is closed and a checkpoint prunes it, and in freed store records, index pages and
Lucene segments until they are reused or merged. docs/security.md ("Erasure on disk") gives what
stays where, as tests/neo4j/test_erasure_on_disk.py measures it on every run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.errors import BackendError
from graphmem.server.conf import TX_LOG_ROTATION_KIB

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

    Call it after the erasure commits (``Database.flush_erased``). Throwaway nodes larger than the
    log rotation size are written and deleted, which closes the log holding the erased values;
    a checkpoint then prunes closed logs.

    Returns True when the server checkpointed on request (Enterprise), False when it cannot
    (Community: it checkpoints on its own, within about 10 s of a write on the local server).
    Raises BackendError (or Unavailable).
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
