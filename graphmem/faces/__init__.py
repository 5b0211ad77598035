"""What every face shows: the JSON views of results and the episode lines that ingest reads."""
