"""The Neo4j adapters: the driver connection, named Cypher queries, the store, the index, migrations."""
