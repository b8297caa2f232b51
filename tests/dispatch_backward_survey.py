"""Survey: the aten ops a ``TorchDispatchMode`` sees during backward, tensormodes against PyTorch.

For each op of the table with a gradient formula, each declared sample whose floating tensors are
float32/float64 runs forward and backward (``autograd.grad`` with fixed output gradients, so no
seed and no accumulation) under a logging dispatch mode in both libraries, on the same inputs. The
ops logged during backward are compared as multisets; ``X.Scalar`` and ``X.Tensor`` count as one
(PyTorch's C++ formulas take Python numbers as Scalars, see issue 24). Prints the ops whose
multisets differ, with the ops only one side ran::

    python -m tests.dispatch_backward_survey [op ...] [--verbose]
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter

import numpy as np

import tensormodes as tm
from tensormodes._ops import OPS
from tensormodes._ops.registry import TensorSpec
from tensormodes.utils._python_dispatch import TorchDispatchMode

from .op_samples import callable_for, make_array

_FLOATS = ("float32", "float64")
_ALLOWED = _FLOATS + ("bool", "uint8", "int8", "int16", "int32", "int64")


def _specs(value):
    if isinstance(value, TensorSpec):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _specs(item)


def surveyed_samples(names=None):
    """``(op name, sample index, opdef, sample)`` for the samples the survey runs."""
    for name, opdef in OPS.items():
        if names and name not in names:
            continue
        if opdef.grad is None or not opdef.differentiable or opdef.random:
            continue
        for i, sample in enumerate(opdef.samples):
            specs = list(_specs(list(sample.args) + list(sample.kwargs.values())))
            if not specs or any(s.dtype not in _ALLOWED for s in specs):
                continue
            if not any(s.dtype in _FLOATS for s in specs):
                continue
            yield name, i, opdef, sample


def _logger(base):
    class Log(base):
        def __init__(self):
            super().__init__()
            self.ops = []
            self.on = False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if self.on:
                self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    return Log


def _build(sample, library, seed: int):
    rng = np.random.default_rng(seed)
    torch_like = library is not tm

    def make(array):
        if torch_like:
            return library.tensor(array)
        return tm.tensor(array)

    def convert(value):
        if isinstance(value, TensorSpec):
            return make(make_array(value, rng))
        if isinstance(value, list):
            return [convert(v) for v in value]
        if isinstance(value, tuple) and any(isinstance(v, TensorSpec) for v in value):
            return tuple(convert(v) for v in value)
        if isinstance(value, tm.dtype) and torch_like:
            return getattr(library, repr(value).split(".")[1])
        return value

    return tuple(convert(a) for a in sample.args), {k: convert(v) for k, v in sample.kwargs.items()}


def _leaves(values):
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _leaves(value)
        elif type(value).__name__ == "Tensor" and value.is_floating_point():
            yield value


def _outputs(result):
    if isinstance(result, (tuple, list)) and type(result).__name__ != "Size":
        for r in result:
            yield from _outputs(r)
    else:
        yield result


class _Silent:
    """Stands for a mode where none is wanted (the plain path)."""

    def __init__(self):
        self.ops = []
        self.on = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def backward_ops(opdef, sample, library, mode_class, seed: int = 0, leaves_wanted: slice = slice(None)):
    """The aten ops (as strings) ``library``'s dispatch mode sees during backward of ``sample``,
    and the gradients (NumPy arrays); None when the sample does not run or has no gradient.
    ``mode_class`` None: no mode (the plain path), no ops. ``leaves_wanted``: which of the floating
    tensors require grad (the others are constants, whose gradients formulas must not compute)."""
    args, kwargs = _build(sample, library, seed)
    leaves = list(_leaves(list(args) + list(kwargs.values())))[leaves_wanted]
    for leaf in leaves:
        leaf.requires_grad_()
    mode = _Silent() if mode_class is None else mode_class()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with mode:
                result = callable_for(opdef, library)(*args, **kwargs)
        except Exception:  # noqa: BLE001 - a sample one side refuses is not surveyed
            return None
        outputs = [o for o in _outputs(result) if hasattr(o, "requires_grad") and o.requires_grad]
        if not outputs:
            return None
        rng = np.random.default_rng(1)
        weights = [library.tensor(rng.uniform(0.5, 1.5, tuple(o.shape))).to(o.dtype) for o in outputs]
        mode.on = True
        try:
            with mode:
                grads = library.autograd.grad(outputs, leaves, weights, allow_unused=True)
        except Exception as error:  # noqa: BLE001
            return ("error", repr(error)), None
        mode.on = False
    force = {} if library is tm else {"force": True}  # PyTorch's zero tensors convert only when forced
    arrays = [None if g is None else np.asarray(g.detach().numpy(**force)) for g in grads]
    return mode.ops, arrays


def normalise(op: str) -> str:
    """``aten.mul.Scalar`` counts as ``aten.mul.Tensor`` (see the module's docstring)."""
    return op[: -len(".Scalar")] + ".Tensor" if op.endswith(".Scalar") else op


def compare(opdef, sample, leaves_wanted: slice = slice(None)):
    """None if both libraries' backward ops agree as multisets, else ``(only ours, only PyTorch's)``
    (Counters), or ``("skip", reason)``."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    ours = backward_ops(opdef, sample, tm, _logger(TorchDispatchMode), leaves_wanted=leaves_wanted)
    theirs = backward_ops(opdef, sample, torch, _logger(TorchMode), leaves_wanted=leaves_wanted)
    if ours is None or theirs is None:
        return ("skip", "no backward" if ours is None and theirs is None else
                f"backward on one side only (ours {ours is not None})")
    if ours[1] is None or theirs[1] is None:
        return ("skip", f"error: ours {ours[0] if ours[1] is None else 'ok'}, "
                        f"torch {theirs[0] if theirs[1] is None else 'ok'}")
    a = Counter(normalise(o) for o in ours[0])
    b = Counter(normalise(o) for o in theirs[0])
    if a == b:
        return None
    return a - b, b - a


def survey(names=None, *, first_only: bool = False, leaves_wanted: slice = slice(None)):
    """``{op name: (only ours, only PyTorch's)}`` of the first differing sample of each op
    (``first_only``: only each op's first surveyed sample is run, for a quick survey; ``leaves_wanted``:
    see ``backward_ops``)."""
    found, done = {}, set()
    for name, _, opdef, sample in surveyed_samples(names):
        if name in found or (first_only and name in done):
            continue
        done.add(name)
        outcome = compare(opdef, sample, leaves_wanted)
        if outcome is not None and outcome[0] != "skip":
            found[name] = outcome
    return found


def gradients(names=None) -> dict:
    """``{"<op>-<sample>-<plain|mode>-<i>": gradient}``: tensormodes' gradients of the surveyed
    samples, without a mode and under a logging mode (to check a formula change keeps them)."""
    found = {}
    for name, i, opdef, sample in surveyed_samples(names):
        for label, mode in (("plain", None), ("mode", _logger(TorchDispatchMode))):
            outcome = backward_ops(opdef, sample, tm, mode)
            if outcome is None or outcome[1] is None:
                continue
            for j, grad in enumerate(outcome[1]):
                if grad is not None:
                    found[f"{name}-{i}-{label}-{j}"] = grad
    return found


def _check_gradients(path: str, names) -> None:
    before = np.load(path)
    now = gradients(names)
    changed = [key for key in now if key in before and not np.array_equal(before[key], now[key], equal_nan=True)]
    changed += [key for key in before.files if key not in now and (not names or key.rsplit("-", 3)[0] in names)]
    print("gradients changed:", changed or "none")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*")
    parser.add_argument("--verbose", action="store_true", help="also list samples skipped, and both logs")
    parser.add_argument("--save-gradients", metavar="FILE", help="save tensormodes' gradients (.npz) and stop")
    parser.add_argument("--check-gradients", metavar="FILE", help="compare tensormodes' gradients with a saved .npz")
    parser.add_argument("--one-leaf", type=int, metavar="I",
                        help="only the I-th floating tensor requires grad (the others' gradients must not be computed)")
    args = parser.parse_args()
    wanted = slice(None) if args.one_leaf is None else slice(args.one_leaf, args.one_leaf + 1)
    if args.save_gradients:
        np.savez(args.save_gradients, **gradients(args.ops))
        return
    if args.check_gradients:
        _check_gradients(args.check_gradients, args.ops)
        return
    total = differing = 0
    seen = set()
    for name, i, opdef, sample in surveyed_samples(args.ops):
        outcome = compare(opdef, sample, wanted)
        total += 1
        if outcome is None:
            continue
        if outcome[0] == "skip":
            if args.verbose:
                print(f"{name}-{i}: skipped ({outcome[1]})")
            continue
        differing += 1
        if name in seen and not args.verbose:
            continue
        seen.add(name)
        ours, theirs = outcome
        print(f"{name}-{i}: ours +{dict(ours)}  torch +{dict(theirs)}")
        if args.verbose:
            import torch
            from torch.utils._python_dispatch import TorchDispatchMode as TorchMode
            print("   ours :", backward_ops(opdef, sample, tm, _logger(TorchDispatchMode), leaves_wanted=wanted)[0])
            print("   torch:", backward_ops(opdef, sample, torch, _logger(TorchMode), leaves_wanted=wanted)[0])
    print(f"{differing} of {total} samples differ, {len(seen)} ops")


if __name__ == "__main__":
    main()
