// mode: schema
// Scope indexes on the searchable labels, so the exact scan of a small scope and its size
// count seek the scope instead of scanning every searchable unit (160 ms -> 7 ms at 100k).
CREATE INDEX search_unit_scope IF NOT EXISTS FOR (n:SearchUnit) ON (n.scope);
