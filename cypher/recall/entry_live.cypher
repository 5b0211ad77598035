// mode: fragment
// params: s
// The search entry e is live at system time $s: it is what showed its unit then.
e.s_from <= $s AND e.s_to > $s
