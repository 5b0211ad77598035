// mode: read
// params: scopes
// How many episodes of these scopes are Undecided: a seek per scope on the label's index,
// which holds only episodes a write has not decided yet (none, once writes are done).
UNWIND $scopes AS scope
MATCH (e:Undecided {scope: scope})
RETURN count(e) AS n
