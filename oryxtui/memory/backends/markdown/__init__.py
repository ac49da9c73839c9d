"""The `markdown` backend: MEMORY.md files (the store, reading them whole or in parts, writing
them atomically under a lock, and the byte-level section scanner for big ones)."""
