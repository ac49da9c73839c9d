"""The `onnx` model with its weights as 8-bit integers in its arithmetic, not only in its file:
the file the `onnx` extra ships stores int8 weights but casts each back to float before its
product, so it computes as a float model does. Quantized once per installed model (ONNX
Runtime's dynamic quantization, per channel) and kept in the user's cache, it embeds twice
as fast — LoCoMo's tuning five, 2,760 turns: 48 → 24 s per 10,000 on two cores — with vectors
within cosine 0.97 of the float ones (0.99 on average) and recall as good (docs/recall.md).
Made under a lock and written whole, so two programs starting at once make it once; a cached
file that cannot be read is made again."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

RECIPE = 1  # of how the file is made: a change makes a new one


def cache_folder() -> Path:
    """$XDG_CACHE_HOME/oryxtui/models (~/.cache/oryxtui/models)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "oryxtui" / "models"


def cached_name(source: Path) -> str:
    """The cached file's name: the model's, its size and time, the runtime's version (a new
    install or runtime makes a new file; an old one is left for the user's cache cleaner)."""
    import onnxruntime

    facts = source.stat()
    version = onnxruntime.__version__
    return f"{source.parent.name}-q8r{RECIPE}-{facts.st_size}-{facts.st_mtime_ns}-ort{version}.onnx"


def quantized(source: Path, folder: Path | None = None, again: bool = False) -> Path:
    """The quantized model of `source` in `folder` (the cache), made when it is not there
    (`again`: made anew, the one there being unreadable). OSError when the folder cannot be
    written; whatever ONNX Runtime raises when `source` is not a model."""
    from filelock import FileLock

    folder = folder or cache_folder()
    target = folder / cached_name(source)
    if target.exists() and not again:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{target}.lock"):
        if target.exists() and not again:
            return target  # another program made it while this one waited
        with tempfile.TemporaryDirectory(dir=folder, prefix=".making-") as scratch:
            made = make(source, Path(scratch))
            os.replace(made, target)
    return target


def make(source: Path, scratch: Path) -> Path:
    """Fold the casts into float weights (ONNX Runtime's basic optimisation, saved), then
    quantize those weights (dynamic, per channel): the new file, in `scratch`."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folded, made = scratch / "folded.onnx", scratch / "quantized.onnx"
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    with _quiet():  # the quantizer logs advice to the root logger: it would draw on a screen
        quantize_dynamic(folded, made, weight_type=QuantType.QInt8, per_channel=True)
    return made


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    before = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(before)
