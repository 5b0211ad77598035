// mode: schema
// Trace retention finds old assembly traces by when they were made.
CREATE INDEX trace_created IF NOT EXISTS FOR (n:Trace) ON (n.created_at);
