// mode: schema
// Fulltext over episodes' raw text, with the scope token beside it (as entry_text): a name a
// write makes known links the earlier episodes that name it, found here (Neo4jStore.earlier_texts).
CREATE FULLTEXT INDEX episode_text IF NOT EXISTS FOR (n:Episode) ON EACH [n.raw, n.scope_token] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
