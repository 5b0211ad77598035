"""The domain: the models and the pure rules over them (limits, times and time words, tokenising
and hashing, timelines, search entries, mentions, fusion, API keys). No I/O."""
