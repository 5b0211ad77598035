"""OpenAI-compatible endpoints: the client graphmem builds for them and structured output from chat models."""
