"""Timing helpers shared by the benchmark scripts (run as `python tests/benchmarks/<script>.py`)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def summarize(samples_ms: list[float]) -> dict[str, float]:
    """Median, p95 and max of millisecond samples; quote medians, these machines are noisy."""
    ordered = sorted(samples_ms)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 3),
        "max_ms": round(ordered[-1], 3),
        "n": len(ordered),
    }


def time_calls(action: Callable[[], object], repeat: int) -> dict[str, float]:
    """Run `action` `repeat` times and summarize how long each call took."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return summarize(samples)
