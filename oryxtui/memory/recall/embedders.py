"""Embedders: text to vectors. An OpenAI-compatible `/embeddings` endpoint through the official
SDK; `local`, static word vectors that ship inside a wheel (no server, no key, no download);
`fastembed`, an ONNX model run in this process (downloaded once, or read from a folder); and
upstream's deterministic `mock` (meaningless, for tests and demos).

A vector is a float32 NumPy array; `model_id` is upstream's `provider/model`, stored with every
vector so that vectors of different models are never compared."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from oryxtui.addresses import masked_text
from oryxtui.errors import EmbedderError
from oryxtui.memory.recall.embedding import Once, Vector, usable

if TYPE_CHECKING:
    from oryxtui.config import EmbeddingSettings


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
        self.shown = masked_text(base_url)  # what messages name it by: no password in it
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
                f"The embedding endpoint {self.shown} did not answer within "
                f"{self.timeout:g} s; check that it is running."
            ) from None
        except openai.APIConnectionError:
            raise EmbedderError(
                f"Cannot reach the embedding endpoint {self.shown}; check embedding.base_url "
                "and that the server is running."
            ) from None
        except openai.APIStatusError as exc:
            raise EmbedderError(
                f"The embedding endpoint {self.shown} refused model {self.model!r} "
                f"(HTTP {exc.status_code}); check embedding.model and the key."
            ) from None
        except openai.OpenAIError as exc:
            raise EmbedderError(f"The embedding endpoint {self.shown} failed ({exc}).") from None
        except ValueError:  # a body that is not JSON
            raise EmbedderError(
                f"The embedding endpoint {self.shown} did not answer JSON; check "
                "embedding.base_url."
            ) from None
        where = f"The embedding endpoint {self.shown}"
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


FASTEMBED_MODEL = "BAAI/bge-small-en-v1.5"  # fastembed's own default
LOCAL_MODEL = "wordllama-l2-supercat-256"
LOCAL_PACKAGE = "wordllama"
LOCAL_FILES = (
    "weights/l2_supercat_256.safetensors",
    "tokenizers/l2_supercat_tokenizer_config.json",
)


class LocalEmbedder:
    """WordLlama's `l2_supercat` vectors (MIT; 256 numbers per token of Llama 2's vocabulary,
    trained from its input embeddings), read from the files its wheel ships: a text's vector is
    the mean of its tokens' vectors. No network, no model server: 10,000 entries in about a
    second on two cores. The files are read directly, on first use (about 0.4 s) — the
    package's own loader looks for the tokenizer in the wrong folder, falls back to a
    download, and configures logging on import."""

    meaningless = False
    model_id = f"local/{LOCAL_MODEL}"
    batch_size = 512
    recall_index_limit = 5_000  # embedded in about half a second: a recall need not wait
    # Calibrated on the tune splits of both self-made sets (bench_quality --provider local
    # --split tune, chats and notes, 2026-12-05): of questions no memory answers (general
    # knowledge, made-up words) at most 1 % get a hit by meaning alone; at the old 0.15,
    # 45-50 %. A short note that answers scores lower: 0.32 counts if it stands 3 deviations
    # above the agent's mean. Any two Chinese sentences score 0.45-0.57 (their answers 0.72
    # and up).
    similarity_floor = 0.37
    standout_floor = (0.32, 3.0)
    cjk_similarity_floor = 0.60
    # What a deviation of its similarity is worth in the order (the default 0.2 is MiniLM's):
    # its averaged vectors tell entries apart little, and at 0.2 they put a weak similarity
    # above the answering words (the notes set's held-out R@1 −5.5; at 0.05 as the words).
    meaning_scale = 0.05

    def __init__(self) -> None:
        from oryxtui.extras import require

        require("local", 'embedding provider "local"')
        self._model = Once(_load_local)

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[Vector]:
        """The mean token vector of each text, normalised (queries and passages alike)."""
        table, tokenizer = self._model()
        vectors: list[Vector] = []
        last = len(table) - 1
        for encoding in tokenizer.encode_batch(list(texts), add_special_tokens=False):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            ids = ids[(ids >= 0) & (ids <= last)]
            rows = table[ids].astype(np.float32)
            vector = rows.mean(axis=0) if len(ids) else np.zeros(table.shape[1])
            norm = float(np.linalg.norm(vector))
            # A text without a token gets a fixed unit vector: finite, and near nothing.
            unit = vector / norm if norm > 0 else _unit(table.shape[1])
            vectors.append(unit.astype(np.float32))
        return vectors


class FastEmbedEmbedder:
    """A model run by fastembed (ONNX Runtime, in this process): one of fastembed's models,
    downloaded once into its cache, or read from `model_path` (a folder holding it) with no
    download at all. Queries and passages get the family's prefixes, as an endpoint's do."""

    meaningless = False

    def __init__(
        self,
        model: str,
        model_path: str | None,
        cache_dir: str | None,
        prefixes: tuple[str, str] = ("", ""),
    ) -> None:
        from oryxtui.extras import require

        require("fastembed", 'embedding provider "fastembed"')
        self.model, self.model_path, self.cache_dir = model, model_path, cache_dir
        self.query_prefix, self.passage_prefix = prefixes
        suffix = f"#{self.passage_prefix.strip()}" if self.passage_prefix.strip() else ""
        self.model_id = f"fastembed/{model}{suffix}"[:128]
        self._model = Once(self._load)

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[Vector]:
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        model = self._model()
        try:
            vectors = [
                np.asarray(v, dtype=np.float32) for v in model.embed([prefix + t for t in texts])
            ]
        except Exception as exc:  # what ONNX Runtime raises is its own
            raise EmbedderError(
                f"fastembed failed to embed with {self.model} ({_first_line(exc)})."
            ) from None
        return usable(vectors, f"fastembed's {self.model}")

    def _load(self) -> Any:
        from fastembed import TextEmbedding
        from loguru import logger

        logger.disable("fastembed")  # its log lines would draw over the dashboard
        options: dict[str, Any] = {"cache_dir": self.cache_dir}
        if self.model_path:
            options["specific_model_path"] = str(Path(self.model_path).expanduser())
        try:
            return TextEmbedding(self.model, **options)
        except Exception as exc:  # unknown model, no network, a damaged or missing file
            where = (
                f"from {self.model_path}"
                if self.model_path
                else "(downloaded once into fastembed's cache: check the network, or set "
                "embedding.model_path to a folder holding it)"
            )
            raise EmbedderError(
                f"fastembed cannot load model {self.model!r} {where}: {_first_line(exc)}."
            ) from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _load_local() -> tuple[np.ndarray, Any]:
    """The vector table (memory-mapped: a question reads only its tokens' rows) and the
    tokenizer of the `local` model, from the package's folder (found without running its
    code); EmbedderError when a file is missing or damaged."""
    import importlib.util

    from tokenizers import Tokenizer

    spec = importlib.util.find_spec(LOCAL_PACKAGE)
    folder = Path(next(iter(spec.submodule_search_locations or ()), "")) if spec else Path()
    weights, tokenizer_file = (folder / name for name in LOCAL_FILES)
    damaged = EmbedderError(
        f"The local embedding model in {folder} cannot be read or is damaged; reinstall it: "
        f"pip install --force-reinstall {LOCAL_PACKAGE}."
    )
    try:
        table = _mapped(weights, "embedding.weight")
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception:  # missing, cut or foreign: each library raises its own error
        raise damaged from None
    if table.ndim != 2 or not table.shape[0]:
        raise damaged
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return table, tokenizer


def _mapped(path: Path, name: str) -> np.ndarray:
    """One tensor of a safetensors file, memory-mapped (the format: an 8-byte header size, a
    JSON header naming each tensor's type, shape and byte range, then the data)."""
    import json
    import struct

    with path.open("rb") as file:
        (size,) = struct.unpack("<Q", file.read(8))
        header = json.loads(file.read(min(size, 1 << 20)))[name]
    dtype = np.dtype({"F16": "<f2", "F32": "<f4"}[header["dtype"]])
    shape = tuple(int(n) for n in header["shape"])
    start, stop = (int(n) for n in header["data_offsets"])
    if stop - start != dtype.itemsize * int(np.prod(shape)):
        raise ValueError("the tensor's size does not match its shape")
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + size + start, shape=shape)


def _unit(size: int) -> Vector:
    vector = np.zeros(size, dtype=np.float32)
    vector[0] = 1.0
    return vector


def create_embedder(
    settings: EmbeddingSettings, environ: os._Environ[str] | dict[str, str] = os.environ
) -> Embedder | None:
    """The configured embedder, or None when none is configured."""
    if settings.provider is None:
        return None
    if settings.provider == "mock":
        return MockEmbedder()
    if settings.provider == "local":
        return LocalEmbedder()
    if settings.provider == "onnx":
        from oryxtui.memory.recall.minilm import MiniLmEmbedder

        return MiniLmEmbedder()
    if settings.provider == "fastembed":
        model = settings.model or FASTEMBED_MODEL
        return FastEmbedEmbedder(
            model, settings.model_path, settings.cache_dir, _prefixes(settings, model)
        )
    assert settings.base_url and settings.model  # the settings check it
    key = environ.get(settings.api_key_env) if settings.api_key_env else None
    return OpenAIEmbedder(
        settings.base_url,
        settings.model,
        key,
        settings.batch_size,
        settings.timeout_seconds,
        _prefixes(settings, settings.model),
    )


def _prefixes(settings: EmbeddingSettings, model: str) -> tuple[str, str]:
    """The query and passage prefixes: the settings', else the model family's."""
    query, passage = prefixes_for(model)
    return (
        query if settings.query_prefix is None else settings.query_prefix,
        passage if settings.passage_prefix is None else settings.passage_prefix,
    )
