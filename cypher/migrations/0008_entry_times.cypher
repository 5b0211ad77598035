// mode: schema
// Search entries by when their episode happened, for the time list of a question that names a
// time (the world-time start has its index already: entry_scope).
CREATE INDEX entry_occurred IF NOT EXISTS FOR (n:SearchEntry) ON (n.scope, n.occurred);
