"""Embedders: text to vectors. An OpenAI-compatible `/embeddings` endpoint through the official
SDK, and upstream's deterministic `mock` (meaningless, for tests and demos).

A vector is a float32 NumPy array; `model_id` is upstream's `provider/model`, stored with every
vector so that vectors of different models are never compared."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from oryxtui.errors import EmbedderError

if TYPE_CHECKING:
    from oryxtui.config import EmbeddingSettings

Vector = np.ndarray


class Embedder(Protocol):
    model_id: str  # upstream's `provider/model`, e.g. "openai/nomic-embed-text"
    meaningless: bool  # True for the mock: its similarities mean nothing

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[Vector]:
        """One vector per text, in order (`kind`: "passage", a stored entry, or "query", what
        is asked); EmbedderError when that is not possible."""
        ...


# What models of a family expect before a query and a stored text (their model cards say so);
# a model of another family gets none. `[embedding] query_prefix` / `passage_prefix` override.
PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("e5", "query: ", "passage: "),
    ("nomic-embed", "search_query: ", "search_document: "),
    ("bge-", "Represent this sentence for searching relevant passages: ", ""),
    ("mxbai-embed", "Represent this sentence for searching relevant passages: ", ""),
    ("snowflake-arctic-embed", "Represent this sentence for searching relevant passages: ", ""),
)


def prefixes_for(model: str) -> tuple[str, str]:
    """(query prefix, passage prefix) a model's family expects."""
    name = model.lower().rsplit("/", 1)[-1]
    for family, query, passage in PREFIXES:
        if family in name and not (family == "bge-" and "bge-m3" in name):
            return query, passage
    return "", ""


def usable(vectors: Sequence[np.ndarray], where: str) -> list[np.ndarray]:
    """The embedder's answer as vectors to store: one-dimensional, of one size, finite; else
    EmbedderError naming `where` (a NaN stored would silently end recall by meaning)."""
    sizes = {vector.shape for vector in vectors}
    if len(sizes) > 1 or any(len(shape) != 1 or not shape[0] for shape in sizes):
        raise EmbedderError(
            f"{where} answered vectors of different sizes, or empty ones; check the model."
        )
    if not all(np.isfinite(vector).all() for vector in vectors):
        raise EmbedderError(f"{where} answered numbers that are not finite (NaN or infinity).")
    return list(vectors)


MOCK_MODEL_ID = "mock/deterministic"
MOCK_DIMENSIONS = 64


class MockEmbedder:
    """Upstream's MockEmbeddingModel, value for value: 64 floats from SHA-256 blocks of the
    text, normalised. The same text always gets the same vector; similar texts do not get
    similar vectors."""

    model_id = MOCK_MODEL_ID
    meaningless = True

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[Vector]:
        return [mock_vector(text) for text in texts]  # upstream's: one vector for either


def mock_vector(text: str) -> Vector:
    seed = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    blocks = [seed]
    hex_seed = seed.hex()
    for counter in range(1, MOCK_DIMENSIONS * 4 // 32):
        blocks.append(hashlib.sha256(f"{hex_seed}:{counter}".encode()).digest())
    bits = np.frombuffer(b"".join(blocks), dtype=">i4")[:MOCK_DIMENSIONS]
    # Java: (float) bits / 2^31f, rounded to float32, as in `bits / 2147483648.0f`.
    values = bits.astype(np.float32) / np.float32(2147483648.0)
    norm_squared = 0.0
    for value in values.tolist():  # Java sums in double, in order
        norm_squared += value * value
    norm = np.float32(math.sqrt(norm_squared))
    return values / norm if norm > 0 else values


class OpenAIEmbedder:
    """Any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, llama.cpp server,
    LM Studio), in batches."""

    meaningless = False

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        batch_size: int,
        timeout: float,
        prefixes: tuple[str, str] = ("", ""),
    ) -> None:
        import openai

        self.base_url = base_url
        self.model = model
        self.query_prefix, self.passage_prefix = prefixes
        # Vectors of prefixed passages are not those of plain ones: they are kept apart.
        suffix = f"#{self.passage_prefix.strip()}" if self.passage_prefix.strip() else ""
        self.model_id = f"openai/{model}{suffix}"[:128]
        self.batch_size = batch_size
        self.timeout = timeout
        # Local servers need no key, but the SDK insists on one.
        self.client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "no-key", timeout=timeout, max_retries=0
        )

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[Vector]:
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        vectors: list[Vector] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [prefix + text for text in texts[start : start + self.batch_size]]
            vectors += self._batch(batch)
        return vectors

    def _batch(self, texts: list[str]) -> list[Vector]:
        import openai

        try:
            # The raw answer, read as plain JSON: the SDK's object per vector costs more than
            # the search itself.
            raw = self.client.embeddings.with_raw_response.create(
                model=self.model, input=texts, encoding_format="float"
            )
            answer = json.loads(raw.http_response.content)
        except openai.APITimeoutError:
            raise EmbedderError(
                f"The embedding endpoint {self.base_url} did not answer within "
                f"{self.timeout:g} s; check that it is running."
            ) from None
        except openai.APIConnectionError:
            raise EmbedderError(
                f"Cannot reach the embedding endpoint {self.base_url}; check embedding.base_url "
                "and that the server is running."
            ) from None
        except openai.APIStatusError as exc:
            raise EmbedderError(
                f"The embedding endpoint {self.base_url} refused model {self.model!r} "
                f"(HTTP {exc.status_code}); check embedding.model and the key."
            ) from None
        except openai.OpenAIError as exc:
            raise EmbedderError(f"The embedding endpoint {self.base_url} failed ({exc}).") from None
        except ValueError:  # a body that is not JSON
            raise EmbedderError(
                f"The embedding endpoint {self.base_url} did not answer JSON; check "
                "embedding.base_url."
            ) from None
        where = f"The embedding endpoint {self.base_url}"
        try:  # what a server answers is untrusted: any shape but a list of vectors is refused
            data = sorted(answer["data"], key=lambda item: int(item["index"]))
            vectors = [np.asarray(item["embedding"], dtype=np.float32) for item in data]
        except (TypeError, ValueError, AttributeError, OverflowError, KeyError):
            raise EmbedderError(
                f"{where} did not answer with embeddings; check embedding.base_url and "
                "embedding.model."
            ) from None
        if len(vectors) != len(texts):
            raise EmbedderError(
                f"{where} answered {len(vectors)} vectors for {len(texts)} texts; check "
                "embedding.model."
            )
        return usable(vectors, where)


def create_embedder(
    settings: EmbeddingSettings, environ: os._Environ[str] | dict[str, str] = os.environ
) -> Embedder | None:
    """The configured embedder, or None when none is configured."""
    if settings.provider is None:
        return None
    if settings.provider == "mock":
        return MockEmbedder()
    assert settings.base_url and settings.model  # the settings check it
    key = environ.get(settings.api_key_env) if settings.api_key_env else None
    query, passage = prefixes_for(settings.model)
    prefixes = (
        query if settings.query_prefix is None else settings.query_prefix,
        passage if settings.passage_prefix is None else settings.passage_prefix,
    )
    return OpenAIEmbedder(
        settings.base_url,
        settings.model,
        key,
        settings.batch_size,
        settings.timeout_seconds,
        prefixes,
    )
