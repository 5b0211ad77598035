// mode: fragment
// params:
// The search entry e is a candidate of the time-list rule `rule` ({from_lo, from_hi, to_lo}:
// graphmem.domain.entries.near): it starts in [from_lo, from_hi) and ends after to_lo.
e.t_from >= rule.from_lo AND e.t_from < rule.from_hi AND e.t_to > rule.to_lo
