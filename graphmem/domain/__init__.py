"""The domain: the models and the pure rules over them (timelines, entries, times, mentions, fusion, keys)."""
