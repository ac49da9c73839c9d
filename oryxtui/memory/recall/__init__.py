"""Ranked recall: routes (semantic, keyword, lexical, recency) fused by rank, the embedders, and
the vector index upstream OryxOS shares. `results` is plain data; the rest needs NumPy."""
