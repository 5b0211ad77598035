// mode: schema
// Entities by the first and by the last word of their names (graphmem.mentions.name_edges): a
// write looks up only those of its texts' word runs that begin and end as some name does
// (mentions/name_edges); migration 0016 sets both on the entities stored before it.
CREATE INDEX entity_first IF NOT EXISTS FOR (n:Entity) ON (n.scope, n.first);
CREATE INDEX entity_last IF NOT EXISTS FOR (n:Entity) ON (n.scope, n.last);
