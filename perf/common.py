"""Timing helpers shared by the benchmarks: best-of-N wall time, side by side in one run."""

import time
from dataclasses import dataclass


@dataclass
class Result:
    """One row of the table: `seconds` for `impl`, and the hand-written NumPy time of the
    same work measured in the same run (`numpy_seconds`), in the same unit."""

    benchmark: str
    impl: str
    seconds: float
    numpy_seconds: float
    note: str = ""

    @property
    def ratio(self):
        return self.seconds / self.numpy_seconds


def best_time(fn, repeat=7, min_time=0.2):
    """Best per-call seconds of `fn` over `repeat` rounds of enough calls to last min_time."""
    return best_times({"fn": fn}, repeat, min_time)["fn"]


def best_times(fns, repeat=7, min_time=0.2):
    """Best per-call seconds of each callable of the dict `fns`, their rounds interleaved
    (a, b, a, b, ...): a slow spell of the shared machine then hits every row alike
    instead of whichever was being timed at that moment."""
    calls = {name: _calls_per_round(fn, min_time / repeat) for name, fn in fns.items()}
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls[name]):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / calls[name])
    return best


def _calls_per_round(fn, round_time):
    fn()
    calls = 1
    while calls < 1 << 20:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= round_time:
            break
        calls *= 2
    return calls
