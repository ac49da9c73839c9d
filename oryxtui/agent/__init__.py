"""The memory-aware agent: sessions, tools, the prompt builder, LLM providers and the loop."""
