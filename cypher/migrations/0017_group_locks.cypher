// mode: schema
// A commit's guards now read the length of each timeline group's log under the scope's names
// lock (store/check_guards): the Lock node each group had is read by nothing and goes.
MATCH (l:Lock) WHERE l.key STARTS WITH 'group:'
CALL (l) { DETACH DELETE l } IN TRANSACTIONS OF 10000 ROWS;
