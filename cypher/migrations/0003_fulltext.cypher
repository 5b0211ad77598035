// mode: schema
// Fulltext over searchable units and entities. The scope token is indexed beside the text so
// a lexical query filters by scope inside Lucene. English analyzer: stop words and stemming.
CREATE FULLTEXT INDEX unit_text IF NOT EXISTS FOR (n:SearchUnit) ON EACH [n.content, n.summary, n.scope_token] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX entity_text IF NOT EXISTS FOR (n:SearchEntity) ON EACH [n.name, n.scope_token] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
