// mode: schema
// Episodes are stored Undecided until the commit that decides them (store/put_episodes): an
// index to count and list them by scope; and those stored before this migration without any
// decision (a write cut short, or one that found nothing to decide: they cannot be told apart)
// are marked so, for `graphmem complete` to decide (one finding nothing is decided at once).
CREATE INDEX undecided_scope IF NOT EXISTS FOR (e:Undecided) ON (e.scope);
MATCH (e:Episode) WHERE NOT (e)-[:DECIDED]->(:Decision)
CALL (e) { SET e:Undecided } IN TRANSACTIONS OF 10000 ROWS;
