// mode: fragment
// params: t_lo, t_hi
// The search entry e shows its unit at system time $s and at some world time in [$t_lo, $t_hi)
// (a point T as [T, T + 1)): the visibility rule every recall list filters by
// (graphmem.domain.entries). The caller tests e's scope, in the form its index takes.
{{include recall/entry_live}} AND e.t_from < $t_hi AND e.t_to > $t_lo
