"""The reduced-precision sweep: every sampled op run by tensormodes and PyTorch with its floating
tensors in bfloat16 (or float16), results and gradients compared bit for bit (issue 27, section 2).

Unlike the differential fuzzer (tests/differential.py, which allows PyTorch's tolerances), a last-bit
difference counts here. A difference is classified by ``(op, kind)`` (kind: ``result bits``,
``gradient bits``, or the fuzzer's own kinds: ``raises``, ``result dtype`` ...); ``REMAINING`` lists the
classes still apart, each with the reason. Survey them::

    python -m tests.half_sweep --dtype bfloat16
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import numpy as np

import tensormodes as tm

from .differential import _CRASH_TORCH, _VALUELESS, Case, Mismatch, _as_numpy, drawable, run_case
from .op_samples import make_array

_HALF = {"bfloat16": tm.bfloat16._np, "float16": np.float16}

# (op, kind) -> why tensormodes' bits still differ from PyTorch's in both half types. "*" kinds
# name every kind of the op.
REMAINING: dict[tuple[str, str], str] = {}


def half_case(case_id: str, opdef, sample, dtype: str) -> Case | None:
    """The sample with every float32/float64 tensor in ``dtype`` (None when it has none)."""
    rng = np.random.default_rng(0)
    changed = False

    def convert(value):
        nonlocal changed
        if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "low"):  # a TensorSpec
            array = make_array(value, rng)
            if array.dtype in (np.float32, np.float64):
                changed = True
                return array.astype(_HALF[dtype])
            return array
        if isinstance(value, list):
            return [convert(v) for v in value]
        if isinstance(value, tuple) and any(hasattr(v, "low") for v in value):
            return tuple(convert(v) for v in value)
        return value

    args = tuple(convert(a) for a in sample.args)
    kwargs = {k: convert(v) for k, v in sample.kwargs.items()}
    return Case(case_id, opdef, args, kwargs) if changed else None


def _bits(value) -> tuple[np.ndarray | None, str | None]:
    array, name = _as_numpy(value)
    if array is None:
        return None, None
    if name in ("bfloat16", "float16"):
        array = np.asarray(array, np.float32)
    return array, name


def _same_bits(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """Equal arrays bit for bit (in float64), NaN matching NaN whatever its sign and payload."""
    if ours.dtype.kind in "biu" or theirs.dtype.kind in "biu":
        return np.array_equal(ours, theirs)
    parts = ((ours.real, theirs.real), (ours.imag, theirs.imag)) if ours.dtype.kind == "c" else ((ours, theirs),)
    for a, b in parts:
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        nan = np.isnan(a)
        if not np.array_equal(nan, np.isnan(b)):
            return False
        if not np.array_equal(np.where(nan, 0, a).view(np.int64), np.where(nan, 0, b).view(np.int64)):
            return False
    return True


def _compare(ours, theirs, what: str, with_values: bool) -> Mismatch | None:
    ours_array, ours_dtype = _bits(ours)
    theirs_array, theirs_dtype = _bits(theirs)
    if ours_dtype is None or theirs_dtype is None:
        if (ours_dtype is None) != (theirs_dtype is None):
            return Mismatch(f"{what} type", f"{type(ours).__name__} != torch's {type(theirs).__name__}")
        return None if str(ours).replace("tensormodes.", "torch.") == str(theirs) or ours == theirs else \
            Mismatch(f"{what} value", f"{ours!r} != torch's {theirs!r}")
    if ours_dtype != theirs_dtype:
        return Mismatch(f"{what} dtype", f"{ours_dtype} != torch's {theirs_dtype}")
    if ours_array.shape != theirs_array.shape:
        return Mismatch(f"{what} shape", f"{ours_array.shape} != torch's {theirs_array.shape}")
    if with_values and not _same_bits(ours_array, theirs_array):
        with np.errstate(all="ignore"):
            differ = ~((ours_array == theirs_array) | (np.isnan(ours_array) & np.isnan(theirs_array)))
        return Mismatch(f"{what} bits", f"{int(differ.sum())} of {differ.size} differ; "
                                        f"first {ours_array[differ][:3]} != torch's {theirs_array[differ][:3]}")
    return None


def compare_bits(case: Case) -> Mismatch | None:
    """The first difference, bit for bit, between the two libraries' runs of ``case``."""
    import torch

    if case.opdef.name in _CRASH_TORCH and _CRASH_TORCH[case.opdef.name](case):
        return None
    ours, theirs = run_case(case, tm, grads=True), run_case(case, torch, grads=True)
    if theirs[0] == "error" and "is not differentiable with respect to argument" in str(theirs[1]):
        ours, theirs = run_case(case, tm, grads=False), run_case(case, torch, grads=False)
    if ours[0] != theirs[0]:
        culprit = ours[1] if ours[0] == "error" else theirs[1]
        return Mismatch("raises" if ours[0] == "error" else "computes", f"{type(culprit).__name__}: {culprit}"[:200])
    if ours[0] == "error":
        return None
    if len(ours[1]) != len(theirs[1]):
        return Mismatch("outputs", f"{len(ours[1])} outputs != torch's {len(theirs[1])}")
    with_values = case.opdef.name not in _VALUELESS
    for o, t in zip(ours[1], theirs[1]):
        mismatch = _compare(o, t, "result", with_values)
        if mismatch:
            return mismatch
    ours_grads, theirs_grads = ours[2], theirs[2]
    if isinstance(ours_grads, Exception) or isinstance(theirs_grads, Exception):
        if isinstance(ours_grads, Exception) != isinstance(theirs_grads, Exception):
            return Mismatch("backward raises" if isinstance(ours_grads, Exception) else "backward computes",
                            str(ours_grads if isinstance(ours_grads, Exception) else theirs_grads)[:200])
        return None
    if (ours_grads is None) != (theirs_grads is None):
        return Mismatch("requires_grad", f"ours {ours_grads is not None}, torch's {theirs_grads is not None}")
    for o, t in zip(ours_grads or (), theirs_grads or ()):
        if (o is None) != (t is None):
            return Mismatch("gradient presence", f"ours {o is not None}, torch's {t is not None}")
        if o is not None:
            mismatch = _compare(o, t, "gradient", True)
            if mismatch:
                return mismatch
    return None


def sweep(dtype: str, names: set[str] | None = None) -> Iterator[tuple[tuple[str, str], Case, Mismatch]]:
    """``((op, kind), case, mismatch)`` for every sample of a drawable op whose half-type run differs."""
    for case_id, opdef, sample in drawable():
        if names is not None and opdef.name not in names:
            continue
        case = half_case(case_id, opdef, sample, dtype)
        if case is None:
            continue
        mismatch = compare_bits(case)
        if mismatch is not None:
            yield mismatch.key(case), case, mismatch


def is_remaining(key: tuple[str, str]) -> bool:
    """True when ``REMAINING`` lists the class (by its kind or all of the op's kinds)."""
    return key in REMAINING or (key[0], "*") in REMAINING


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bfloat16", choices=sorted(_HALF))
    parser.add_argument("--all", action="store_true", help="list the REMAINING classes too")
    parser.add_argument("--threads", type=int, default=0, help="PyTorch's intra-op threads (0: its default)")
    parser.add_argument("ops", nargs="*", help="only these ops")
    options = parser.parse_args(argv)
    if options.threads:
        import torch

        torch.set_num_threads(options.threads)
        tm.set_num_threads(options.threads)  # kernels that split work as PyTorch's threads do read it
    found: dict = {}
    for key, case, mismatch in sweep(options.dtype, set(options.ops) or None):
        found.setdefault(key, (case, mismatch))
    shown = {key: value for key, value in found.items() if options.all or not is_remaining(key)}
    for (name, kind), (case, mismatch) in sorted(shown.items()):
        listed = " (listed)" if is_remaining((name, kind)) else ""
        print(f"{name} / {kind}{listed}: {mismatch.detail[:200]}\n    {case.case_id}")
    print(f"{len(found)} mismatch classes in {options.dtype}, {len(found) - len(shown)} of them listed")
    return 1 if shown and not options.all else 0


if __name__ == "__main__":
    raise SystemExit(main())
