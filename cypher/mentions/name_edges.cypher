// mode: read
// params: scope, words
// Of these words, those that begin (firsts) and those that end (lasts) the name of an entity of
// the scope (graphmem.domain.mentions.name_edges): a word run can be a known name only if it begins
// and ends so.
UNWIND $words AS word
WITH word, EXISTS { MATCH (e:Entity) WHERE e.scope = $scope AND e.first = word } AS first,
     EXISTS { MATCH (e:Entity) WHERE e.scope = $scope AND e.last = word } AS last
RETURN collect(CASE WHEN first THEN word END) AS firsts, collect(CASE WHEN last THEN word END) AS lasts
