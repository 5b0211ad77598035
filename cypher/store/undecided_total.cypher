// mode: read
// params:
// How many episodes of every scope are Undecided (doctor): the label's count.
MATCH (e:Undecided)
RETURN count(e) AS n
