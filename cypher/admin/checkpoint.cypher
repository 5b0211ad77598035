// mode: write
// Force a checkpoint now (Enterprise editions; Community has no such procedure).
CALL db.checkpoint()
