// mode: write
// Delete the throwaway nodes of write_log_filler.
MATCH (f:GraphmemLogFiller) DELETE f
