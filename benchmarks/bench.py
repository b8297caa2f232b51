"""tensormodes micro-benchmarks: ns per call, side by side with NumPy and PyTorch.

Run ``python benchmarks/bench.py`` (``--quick`` for fewer repeats, ``--group NAME``
to run one group). Each row times the same operation in tensormodes, in the bare
NumPy kernel it ends in, and in PyTorch when it is installed. Libraries are
interleaved within every repeat and the minimum over repeats is reported, so
that machine noise hits all columns alike. BLAS is pinned to one thread for
both libraries (interleaved multi-threaded BLAS calls spin-wait and run ~10x
slower).

Columns: tensormodes, a baseline (per group: the bare NumPy kernel, the same call
on plain tensors, or the same call with no mode), PyTorch; then the ratios
tensormodes / baseline and tensormodes / PyTorch.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

import tensormodes as tm  # noqa: E402
from tensormodes import fx  # noqa: E402
from tensormodes.overrides import TorchFunctionMode  # noqa: E402

try:
    import torch
    import torch.fx
    torch.set_num_threads(1)
except ImportError:
    torch = None


@dataclass
class Row:
    """One benchmarked operation: tensormodes, a baseline, and PyTorch."""

    group: str
    name: str
    ours: Callable
    baseline: Callable | None = None
    torch: Callable | None = None


# Wall-clock time by default; --cpu-time measures the thread's CPU time instead, which a busy
# shared machine disturbs far less (BLAS is pinned to this thread, so it is all the work).
_TIMER = [time.perf_counter]


def _time(fn: Callable, number: int) -> float:
    return timeit.Timer(fn, timer=_TIMER[0]).timeit(number) / number * 1e9


def _calibrate(fn: Callable, target_seconds: float) -> int:
    number = 1
    while True:
        if timeit.Timer(fn, timer=_TIMER[0]).timeit(number) > target_seconds or number >= 1_000_000:
            return number
        number *= 4


def measure(rows: list[Row], repeats: int, target_seconds: float) -> list[dict]:
    """Minimum ns per call of every column, interleaving columns and rows per repeat."""
    plans = []
    for row in rows:
        columns = {"ours": row.ours, "baseline": row.baseline, "torch": row.torch}
        columns = {k: v for k, v in columns.items() if v is not None}
        numbers = {k: _calibrate(v, target_seconds) for k, v in columns.items()}
        plans.append((row, columns, numbers, {k: float("inf") for k in columns}))
    for _ in range(repeats):
        for _row, columns, numbers, best in plans:
            for key, fn in columns.items():
                best[key] = min(best[key], _time(fn, numbers[key]))
    return [{"row": row, **best} for row, _, _, best in plans]


# -- rows ------------------------------------------------------------------------------------


def foundation_rows() -> list[Row]:
    x1, y1 = tm.ones(1), tm.ones(1)
    a1, b1 = x1.numpy(), y1.numpy()
    big_x, big_y = tm.randn(1000, 1000), tm.randn(1000, 1000)
    big_a, big_b = big_x.numpy(), big_y.numpy()
    m, n = tm.randn(256, 256), tm.randn(256, 256)
    ma, na = m.numpy(), n.numpy()
    rows = [
        Row("foundation", "tm.add(x, y) 1 elem", lambda: tm.add(x1, y1), lambda: np.add(a1, b1)),
        Row("foundation", "x + y 1 elem", lambda: x1 + y1, lambda: np.add(a1, b1)),
        Row("foundation", "x.add(y) 1 elem", lambda: x1.add(y1), lambda: np.add(a1, b1)),
        Row("foundation", "zeros(3)", lambda: tm.zeros(3), lambda: np.zeros(3, np.float32)),
        Row("foundation", "x.sum() 1 elem", lambda: x1.sum(), lambda: np.sum(a1)),
        Row("foundation", "x.shape", lambda: x1.shape, lambda: a1.shape),
        Row("foundation", "add 1000x1000", lambda: tm.add(big_x, big_y), lambda: np.add(big_a, big_b)),
        Row("foundation", "matmul 256x256", lambda: tm.matmul(m, n), lambda: np.matmul(ma, na)),
    ]
    if torch is not None:
        tx1, ty1 = torch.ones(1), torch.ones(1)
        tbx, tby = torch.randn(1000, 1000), torch.randn(1000, 1000)
        tm_, tn_ = torch.randn(256, 256), torch.randn(256, 256)
        for row, fn in zip(rows, [lambda: torch.add(tx1, ty1), lambda: tx1 + ty1, lambda: tx1.add(ty1),
                                  lambda: torch.zeros(3), lambda: tx1.sum(), lambda: tx1.shape,
                                  lambda: torch.add(tbx, tby), lambda: torch.matmul(tm_, tn_)]):
            row.torch = fn
    return rows


def subclass_rows() -> list[Row]:
    class PassThrough(tm.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)

    class Inherits(tm.Tensor):
        pass

    rows = []
    torch_classes = {}
    if torch is not None:
        class TorchPassThrough(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs)

        class TorchInherits(torch.Tensor):
            pass

        torch_classes = {"pass-through": TorchPassThrough, "inherits default": TorchInherits}
    px, py = tm.ones(1), tm.ones(1)
    for label, cls in (("pass-through", PassThrough), ("inherits default", Inherits)):
        x, y = tm.ones(1).as_subclass(cls), tm.ones(1).as_subclass(cls)
        new = [Row("subclass", f"{label}: x + y", lambda x=x, y=y: x + y, lambda: px + py),
               Row("subclass", f"{label}: x.add(y)", lambda x=x, y=y: x.add(y), lambda: px.add(py)),
               Row("subclass", f"{label}: tm.add(x, y)", lambda x=x, y=y: tm.add(x, y), lambda: tm.add(px, py))]
        if torch_classes:
            tcls = torch_classes[label]
            tx, ty = torch.ones(1).as_subclass(tcls), torch.ones(1).as_subclass(tcls)
            new[0].torch = lambda tx=tx, ty=ty: tx + ty
            new[1].torch = lambda tx=tx, ty=ty: tx.add(ty)
            new[2].torch = lambda tx=tx, ty=ty: torch.add(tx, ty)
        rows += new
    return rows


class _PassThrough(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _AddsNothing(TorchFunctionMode):
    handled_functions = {tm.mul}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def mode_rows() -> list[Row]:
    x, y = tm.ones(1), tm.ones(1)
    torch_mode = None
    if torch is not None:
        from torch.overrides import TorchFunctionMode as TorchMode

        class TorchPassThrough(TorchMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        torch_mode = TorchPassThrough
        tx, ty = torch.ones(1), torch.ones(1)
    rows = []
    for depth in (1, 2, 4):
        for label, ours, theirs in (
            ("tm.add(x, y)", lambda: tm.add(x, y), lambda: torch.add(tx, ty)),
            ("x + y", lambda: x + y, lambda: tx + ty),
            ("zeros(3)", lambda: tm.zeros(3), lambda: torch.zeros(3)),
        ):
            row = Row("modes", f"{depth} pass-through mode(s): {label}",
                      _looped_under([_PassThrough() for _ in range(depth)], ours))
            if torch_mode is not None:
                row.torch = _looped_under([torch_mode() for _ in range(depth)], theirs)
            rows.append(row)
    rows.append(Row("modes", "declared mode skipping add: tm.add(x, y)",
                    _looped_under([_AddsNothing()], lambda: tm.add(x, y))))
    for row in rows:
        if row.baseline is None:
            call = row.name.split(": ")[1]
            row.baseline = _looped_under([], {"tm.add(x, y)": lambda: tm.add(x, y), "x + y": lambda: x + y,
                                              "zeros(3)": lambda: tm.zeros(3)}[call])
    return rows


def _looped_under(modes: list, fn: Callable, inner: int = 200) -> Callable:
    """Run ``fn`` ``inner`` times inside the modes; reported per call of ``fn``."""

    def run():
        for mode in modes:
            mode.__enter__()
        try:
            for _ in range(inner):
                fn()
        finally:
            for mode in reversed(modes):
                mode.__exit__(None, None, None)

    run.per_call = inner
    return run


def autograd_rows() -> list[Row]:
    """Forward + backward of a small MLP (Linear 64->64, ReLU, Linear 64->10, cross-entropy, batch 32).

    Baseline: the same network in HIPS autograd (``pip install autograd``) when installed.
    """
    import tensormodes.nn.functional as F

    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((32, 64)).astype(np.float32)
    y_np = rng.integers(0, 10, 32)
    w1_np = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    b1_np = np.zeros(64, np.float32)
    w2_np = (rng.standard_normal((10, 64)) * 0.1).astype(np.float32)
    b2_np = np.zeros(10, np.float32)
    x, y = tm.tensor(x_np), tm.tensor(y_np)
    params = [tm.tensor(a, requires_grad=True) for a in (w1_np, b1_np, w2_np, b2_np)]

    def step():
        w1, b1, w2, b2 = params
        loss = F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)
        loss.backward()
        for p in params:
            p.grad = None

    def chain(lib):
        # 30 small differentiable ops, forward and backward: what autograd costs per op when the
        # kernels are nearly free (issue 13's chain target).
        leaf = lib.linspace(-1, 1, 16, requires_grad=True)

        def run():
            y = leaf
            for _ in range(10):
                y = (y * 1.5 + 0.1).tanh()
            y.sum().backward()
            leaf.grad = None
        return run

    x_small, y_small = tm.ones(1), tm.ones(1)
    rows = [Row("autograd", "MLP forward+backward (batch 32)", step),
            Row("autograd", "add 1 elem, no grad (cf. foundation)", lambda: tm.add(x_small, y_small)),
            Row("autograd", "30-op chain (y*1.5+0.1).tanh() x10, fwd+bwd", chain(tm))]
    try:
        import autograd
        import autograd.numpy as anp

        def hips_loss(weights):
            w1, b1, w2, b2 = weights
            hidden = anp.maximum(x_np @ w1.T + b1, 0)
            logits = hidden @ w2.T + b2
            shifted = logits - anp.max(logits, axis=1, keepdims=True)
            log_probs = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
            return -anp.mean(log_probs[np.arange(32), y_np])

        hips_grad = autograd.grad(hips_loss)
        weights = [w1_np, b1_np, w2_np, b2_np]
        rows[0].baseline = lambda: hips_grad(weights)
    except ImportError:
        pass
    if torch is not None:
        tx, ty = torch.tensor(x_np), torch.tensor(y_np)
        tparams = [torch.tensor(a, requires_grad=True) for a in (w1_np, b1_np, w2_np, b2_np)]
        tF = torch.nn.functional

        def torch_step():
            w1, b1, w2, b2 = tparams
            loss = tF.cross_entropy(tF.linear(tF.relu(tF.linear(tx, w1, b1)), w2, b2), ty)
            loss.backward()
            for p in tparams:
                p.grad = None

        rows[0].torch = torch_step
        tx1, ty1 = torch.ones(1), torch.ones(1)
        rows[1].torch = lambda: torch.add(tx1, ty1)
        rows[2].torch = chain(torch)
    return rows


def data_rows() -> list[Row]:
    """tm.save / tm.load of a 6 MiB state dict (16 float32 256x384 tensors) and one DataLoader
    epoch over 1797x64 float32 samples in batches of 64.

    Baselines: ``safetensors.numpy`` for files (when installed; it checks no checksum), NumPy
    indexing with each batch's indices for the loader. The torch column is ``torch.save`` /
    ``torch.load`` and torch's ``DataLoader``. The file rows run in this long-lived process,
    whose allocator reuses warm memory; ``checkpoint_files.py`` times them in fresh processes.
    """
    rng = np.random.default_rng(0)
    arrays = {f"layer{i}.weight": rng.standard_normal((256, 384)).astype(np.float32) for i in range(16)}
    state = {k: tm.from_numpy(v) for k, v in arrays.items()}
    folder = tempfile.TemporaryDirectory()
    ours_path, base_path, torch_path = (os.path.join(folder.name, n) for n in ("tm.safetensors", "np.st", "pt.pt"))
    tm.save(state, ours_path)

    def load():
        folder  # noqa: B018 - the rows keep the folder (deleted with it) alive
        return tm.load(ours_path)

    rows = [Row("data", "tm.save 6 MiB state dict", lambda: tm.save(state, ours_path)),
            Row("data", "tm.load 6 MiB state dict", load)]
    try:
        import safetensors.numpy as safetensors_numpy

        safetensors_numpy.save_file(arrays, base_path)
        rows[0].baseline = lambda: safetensors_numpy.save_file(arrays, base_path)
        rows[1].baseline = lambda: safetensors_numpy.load_file(base_path)
    except ImportError:
        pass
    x = rng.standard_normal((1797, 64)).astype(np.float32)
    y = rng.integers(0, 10, 1797)
    dataset = tm.utils.data.TensorDataset(tm.from_numpy(x), tm.from_numpy(y))

    def epoch(loader):
        for _ in loader:
            pass

    def numpy_epoch(order):
        for start in range(0, len(order), 64):
            index = order[start:start + 64]
            x[index], y[index]  # noqa: B018

    generator = tm.Generator().manual_seed(0)
    rows += [Row("data", "DataLoader epoch 1797x64, batch 64",
                 lambda: epoch(tm.utils.data.DataLoader(dataset, batch_size=64)),
                 lambda: numpy_epoch(np.arange(1797))),
             Row("data", "DataLoader epoch, shuffled",
                 lambda: epoch(tm.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, generator=generator)),
                 lambda: numpy_epoch(rng.permutation(1797)))]
    if torch is not None:
        torch_state = {k: torch.from_numpy(v) for k, v in arrays.items()}
        torch.save(torch_state, torch_path)
        rows[0].torch = lambda: torch.save(torch_state, torch_path)
        rows[1].torch = lambda: torch.load(torch_path, weights_only=True)
        torch_dataset = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
        torch_generator = torch.Generator().manual_seed(0)
        rows[2].torch = lambda: epoch(torch.utils.data.DataLoader(torch_dataset, batch_size=64))
        rows[3].torch = lambda: epoch(torch.utils.data.DataLoader(torch_dataset, batch_size=64, shuffle=True,
                                                                  generator=torch_generator))
    return rows


def optim_rows() -> list[Row]:
    """Optimizer steps over the parameters of a 64->128->10 MLP (4 tensors), and a whole
    training step with AdamW (batch 64).

    Baseline: the same in-place updates written directly in NumPy (no tensors, no dispatch).
    PyTorch runs its per-tensor loop (``foreach=False``), which is also its CPU default.
    """
    import math

    import tensormodes.nn.functional as F

    rng = np.random.default_rng(0)
    shapes = ((128, 64), (128,), (10, 128), (10,))
    arrays = [(rng.standard_normal(s) * 0.1).astype(np.float32) for s in shapes]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    x_np, y_np = rng.standard_normal((64, 64)).astype(np.float32), rng.integers(0, 10, 64)

    def make(lib, name, **options):
        params = [lib.nn.Parameter(lib.tensor(a)) for a in arrays]
        for p, g in zip(params, grads):
            p.grad = lib.tensor(g)
        optimizer = getattr(lib.optim, name)(params, lr=1e-3, **options)
        optimizer.step()
        return params, optimizer

    def numpy_adamw():
        ps, gs = [a.copy() for a in arrays], grads
        ms, vs = [np.zeros_like(a) for a in arrays], [np.zeros_like(a) for a in arrays]
        count = [0]

        def step():
            count[0] += 1
            bias1, bias2 = 1 - 0.9 ** count[0], math.sqrt(1 - 0.999 ** count[0])
            for p, g, m, v in zip(ps, gs, ms, vs):
                p *= 1 - 1e-3 * 1e-2
                m += (g - m) * 0.1
                v *= 0.999
                v += 0.001 * g * g
                denom = np.sqrt(v)
                denom /= bias2
                denom += 1e-8
                p -= (1e-3 / bias1) * m / denom
        return step

    def numpy_sgd():
        ps, gs, bufs = [a.copy() for a in arrays], grads, [g.copy() for g in grads]

        def step():
            for p, g, buf in zip(ps, gs, bufs):
                buf *= 0.9
                buf += g
                p -= 1e-3 * buf
        return step

    def training_step(lib, functional):
        params, optimizer = make(lib, "AdamW")
        x, y = lib.tensor(x_np), lib.tensor(y_np)

        def step():
            optimizer.zero_grad()
            w1, b1, w2, b2 = params
            functional.cross_entropy(functional.linear(functional.relu(functional.linear(x, w1, b1)), w2, b2),
                                     y).backward()
            optimizer.step()
        return step

    def unfused_training_step(lib, functional):
        # The same step with the loss written out, as issue 13's target has it: log_softmax, gather
        # and mean instead of the fused cross_entropy (four more nodes, each way).
        params, optimizer = make(lib, "AdamW")
        x, y = lib.tensor(x_np), lib.tensor(y_np).unsqueeze(1)

        def step():
            optimizer.zero_grad()
            w1, b1, w2, b2 = params
            logits = functional.linear(functional.relu(functional.linear(x, w1, b1)), w2, b2)
            (-functional.log_softmax(logits, 1).gather(1, y).mean()).backward()
            optimizer.step()
        return step

    rows = [Row("optim", "AdamW.step(), MLP 64-128-10", make(tm, "AdamW")[1].step, numpy_adamw()),
            Row("optim", "SGD(momentum=0.9).step(), same params", make(tm, "SGD", momentum=0.9)[1].step,
                numpy_sgd()),
            Row("optim", "MLP training step with AdamW (batch 64)", training_step(tm, F)),
            Row("optim", "same, loss log_softmax+gather+mean", unfused_training_step(tm, F))]
    if torch is not None:
        rows[0].torch = make(torch, "AdamW", foreach=False)[1].step
        rows[1].torch = make(torch, "SGD", momentum=0.9, foreach=False)[1].step
        rows[2].torch = training_step(torch, torch.nn.functional)
        rows[3].torch = unfused_training_step(torch, torch.nn.functional)
    return rows


def convolution_rows() -> list[Row]:
    """conv2d and max_pool2d, forward + backward, on a batch of 32 small images (8 channels, 16x16)."""
    import tensormodes.nn.functional as F

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(np.float32)
              for shape in ((32, 8, 16, 16), (16, 8, 3, 3), (16,), (32, 16, 16, 16))]
    x, w, b, planes = (tm.tensor(a, requires_grad=True) for a in arrays)

    def conv_step():
        F.conv2d(x, w, b, padding=1).sum().backward()

    def pool_step():
        F.max_pool2d(planes, 2).sum().backward()

    rows = [Row("convolution", "conv2d 3x3 fwd+bwd (32x8x16x16 -> 16 ch)", conv_step),
            Row("convolution", "max_pool2d 2x2 fwd+bwd (32x16x16x16)", pool_step)]
    if torch is not None:
        tx, tw, tb, tplanes = (torch.tensor(a, requires_grad=True) for a in arrays)
        tF = torch.nn.functional

        def torch_conv_step():
            tF.conv2d(tx, tw, tb, padding=1).sum().backward()

        def torch_pool_step():
            tF.max_pool2d(tplanes, 2).sum().backward()

        rows[0].torch, rows[1].torch = torch_conv_step, torch_pool_step
    return rows


def _chained_adds(n: int) -> Callable:
    def chained(x):
        for _ in range(n):
            x = x + 1
        return x
    return chained


def _small_network(L) -> Callable:
    def network(x, w):
        h = (x @ w).relu()
        h = h * 2 + L.ones(8)
        return h.sum(dim=1).tanh() - h.mean()
    return network


def fx_trace_rows() -> list[Row]:
    """Tracing (incl. GraphModule creation and codegen) against torch.fx.symbolic_trace."""
    rows = [Row("fx", f"symbolic_trace {n:,} chained x + 1", lambda n=n: fx.symbolic_trace(_chained_adds(n)))
            for n in (100, 1_000, 10_000)]
    if torch is not None:
        for row, n in zip(rows, (100, 1_000, 10_000)):
            row.torch = lambda n=n: torch.fx.symbolic_trace(_chained_adds(n))
    return rows


def fx_run_rows() -> list[Row]:
    """Calling a traced GraphModule and Interpreter.run against the original function (a group
    of its own: interleaved with the slow tracing rows, these short calls measure noisily)."""
    rows = []
    network = _small_network(tm)
    gm = fx.symbolic_trace(network)
    x, w = tm.randn(16, 8), tm.randn(8, 8)
    rows.append(Row("fx", "GraphModule call (small network)", lambda: gm(x, w), lambda: network(x, w)))
    interpreter = fx.Interpreter(gm)
    rows.append(Row("fx", "Interpreter.run (small network)", lambda: interpreter.run(x, w), lambda: network(x, w)))
    if torch is not None:
        torch_network = _small_network(torch)
        tgm = torch.fx.symbolic_trace(torch_network)
        tx, tw = torch.randn(16, 8), torch.randn(8, 8)
        rows[0].torch = lambda: tgm(tx, tw)
        tinterpreter = torch.fx.Interpreter(tgm)
        rows[1].torch = lambda: tinterpreter.run(tx, tw)
    return rows


def _mlp_backwards(modes: list):
    """The backward pass alone of the autograd group's MLP step, in tensormodes and in PyTorch
    (None without it): the loss is made once (under ``modes``, each library's instances), and
    each call runs ``backward(retain_graph=True)`` on it under the same modes and clears the
    gradients."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((32, 64)).astype(np.float32), rng.integers(0, 10, 32),
              (rng.standard_normal((64, 64)) * 0.1).astype(np.float32), np.zeros(64, np.float32),
              (rng.standard_normal((10, 64)) * 0.1).astype(np.float32), np.zeros(10, np.float32)]

    def make(library, mode):
        functional = library.nn.functional
        x, y = library.tensor(arrays[0]), library.tensor(arrays[1])
        params = [library.tensor(a, requires_grad=True) for a in arrays[2:]]
        if mode is not None:
            mode.__enter__()
        try:
            w1, b1, w2, b2 = params
            loss = functional.cross_entropy(
                functional.linear(functional.relu(functional.linear(x, w1, b1)), w2, b2), y)
        finally:
            if mode is not None:
                mode.__exit__(None, None, None)

        def backward():
            loss.backward(retain_graph=True)
            for p in params:
                p.grad = None

        return _looped_under([mode], backward, 5) if mode is not None else backward

    return make(tm, modes[0]), None if torch is None else make(torch, modes[1])


def _mlp_steps():
    """One training step (forward + backward) of the autograd group's MLP, in tensormodes and in
    PyTorch when installed (None otherwise)."""
    import tensormodes.nn.functional as F

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((32, 64)).astype(np.float32), rng.integers(0, 10, 32),
              (rng.standard_normal((64, 64)) * 0.1).astype(np.float32), np.zeros(64, np.float32),
              (rng.standard_normal((10, 64)) * 0.1).astype(np.float32), np.zeros(10, np.float32)]

    def make(library, functional):
        x, y = library.tensor(arrays[0]), library.tensor(arrays[1])
        params = [library.tensor(a, requires_grad=True) for a in arrays[2:]]

        def step():
            w1, b1, w2, b2 = params
            loss = functional.cross_entropy(functional.linear(functional.relu(functional.linear(x, w1, b1)), w2, b2),
                                            y)
            loss.backward()
            for p in params:
                p.grad = None

        return step

    return make(tm, F), None if torch is None else make(torch, torch.nn.functional)


def ready_mode_rows() -> list[Row]:
    """The MLP step of the autograd group under each ready-made mode (entered once around 20
    steps), against the same steps with no mode; the torch column is PyTorch's step under its
    own FlopCounterMode (FlopCounterMode row) or with no mode."""
    import tempfile

    from tensormodes.modes import LoggingMode, NanCheckMode, OpCounterMode, TimingMode
    from tensormodes.utils.flop_counter import FlopCounterMode

    step, torch_step = _mlp_steps()
    log_path = os.path.join(tempfile.mkdtemp(), "calls.log")
    modes = [("no mode", lambda: []),
             ("FlopCounterMode", lambda: [FlopCounterMode(display=False)]),
             ("OpCounterMode", lambda: [OpCounterMode()]),
             ("NanCheckMode", lambda: [NanCheckMode()]),
             ("TimingMode", lambda: [TimingMode()]),
             ("LoggingMode to a file", lambda: [LoggingMode(log_path)]),
             ("LoggingMode to a file, dedupe", lambda: [LoggingMode(log_path, dedupe=True)])]
    rows = []
    for label, make_modes in modes:
        row = Row("ready modes", f"MLP step, {label}", _looped_under(make_modes(), step, 20),
                  _looped_under([], step, 20))
        if torch_step is not None:
            if label == "FlopCounterMode":
                from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode
                row.torch = _looped_under([TorchFlopCounterMode(display=False)], torch_step, 20)
            else:
                row.torch = _looped_under([], torch_step, 20)
        rows.append(row)
    return rows


def meta_rows() -> list[Row]:
    """tensormodes.meta: ``validate``'s cost per record (target: 20,000 records/s, 50,000 ns
    per record), on records that are all distinct (the properties family: clone, contiguous,
    detach, numel, _to_copy on 400 shapes and layouts) and on the records of 20 MLP training
    steps (a loop repeats its calls: each distinct record is replayed once); and the MLP
    64->128->10 forward at batch 64 under CrossRefMode against the plain forward (target: 3x)."""
    from tensormodes.meta import CrossRefMode, RecordingMode, validate

    tensors = []
    for rows in range(1, 21):
        for cols in range(1, 11):
            tensors.append(tm.ones(rows, cols))
            tensors.append(tm.ones(cols, rows).t())
    with RecordingMode() as distinct:
        for x in tensors:
            x.clone().contiguous().detach().numel()
            tm._to_copy(x, dtype=tm.float64)

    step, _ = _mlp_steps()
    with RecordingMode() as training:
        for _ in range(20):
            step()

    def validating(records):
        def run():
            validate(records)
        run.per_call = len(records)
        return run

    model = tm.nn.Sequential(tm.nn.Linear(64, 128), tm.nn.ReLU(), tm.nn.Linear(128, 10))
    x = tm.randn(64, 64)

    def checked_forward():
        with CrossRefMode():
            model(x)

    big = tm.nn.Sequential(tm.nn.Linear(64, 128), tm.nn.ReLU(), tm.nn.Linear(128, 10)).to("meta")
    huge_batch = tm.empty(1_000_000, 64, device="meta")
    meta_forward = Row("meta", "meta forward: MLP 64-128-10, batch 1,000,000", lambda: big(huge_batch))
    if torch is not None:
        torch_big = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                        torch.nn.Linear(128, 10)).to("meta")
        torch_batch = torch.empty(1_000_000, 64, device="meta")
        meta_forward.torch = lambda: torch_big(torch_batch)

    return [meta_forward,
            Row("meta", f"validate, per record ({len(distinct.records)} distinct)", validating(distinct.records)),
            Row("meta", f"validate, per record (20 MLP steps, {len(training.records)})",
                validating(training.records)),
            Row("meta", "CrossRefMode: MLP 64-128-10 forward, batch 64", checked_forward, lambda: model(x))]


def random_rows() -> list[Row]:
    """PyTorch's streams reproduced in NumPy; the baseline is NumPy's own (different) generator."""
    rng = np.random.default_rng(0)
    ones = tm.ones(1_000_000)
    rates = tm.tensor(rng.random(10_000, np.float32) * 20)
    concentrations = tm.tensor(rng.random(10_000, np.float32) * 3 + 0.01)
    rows = [
        Row("random", "randn 10^7 float32", lambda: tm.randn(10_000_000),
            lambda: rng.standard_normal(10_000_000, np.float32)),
        Row("random", "rand 10^6 float32", lambda: tm.rand(1_000_000), lambda: rng.random(1_000_000, np.float32)),
        Row("random", "randn 10 float32", lambda: tm.randn(10), lambda: rng.standard_normal(10, np.float32)),
        Row("random", "randperm 10^5", lambda: tm.randperm(100_000), lambda: rng.permutation(100_000)),
        Row("random", "dropout 10^6", lambda: tm.nn.functional.dropout(ones, 0.5),
            lambda: ones.numpy() * (rng.random(1_000_000) >= 0.5) * 2.0),
        Row("random", "randn 10^6 bfloat16", lambda: tm.randn(1_000_000, dtype=tm.bfloat16),
            lambda: rng.standard_normal(1_000_000, np.float32)),
        Row("random", "alpha_dropout 10^6", lambda: tm.nn.functional.alpha_dropout(ones, 0.5, True),
            lambda: ones.numpy() * (rng.random(1_000_000) >= 0.5)),
        Row("random", "poisson 10^4 (rates 0-20)", lambda: tm.poisson(rates), lambda: rng.poisson(rates.numpy())),
        Row("random", "_standard_gamma 10^4 (0-3)", lambda: tm._standard_gamma(concentrations),
            lambda: rng.standard_gamma(concentrations.numpy())),
    ]
    if torch is not None:
        tones = torch.ones(1_000_000)
        trates, tconcentrations = torch.from_numpy(rates.numpy()), torch.from_numpy(concentrations.numpy())
        for row, fn in zip(rows, [lambda: torch.randn(10_000_000), lambda: torch.rand(1_000_000),
                                  lambda: torch.randn(10), lambda: torch.randperm(100_000),
                                  lambda: torch.nn.functional.dropout(tones, 0.5),
                                  lambda: torch.randn(1_000_000, dtype=torch.bfloat16),
                                  lambda: torch.nn.functional.alpha_dropout(tones, 0.5, True),
                                  lambda: torch.poisson(trates), lambda: torch._standard_gamma(tconcentrations)]):
            row.torch = fn
    return rows


def dispatch_rows() -> list[Row]:
    """The dispatch level: a no-op TorchDispatchMode around ``add`` of (1,) tensors; a wrapper
    subclass that unwraps and rewraps with pytree doing ``add``; the autograd group's MLP step
    (forward + backward) under a pass-through dispatch mode. Baseline: the same with no mode /
    plain tensors."""
    from tensormodes.utils._python_dispatch import TorchDispatchMode
    from tensormodes.utils._pytree import tree_map

    class PassThrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Wrapped(tm.Tensor):
        __torch_function__ = tm._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            self = tm.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
            self.elem = elem
            return self

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            out = func(*tree_map(lambda a: a.elem if isinstance(a, cls) else a, args),
                       **tree_map(lambda a: a.elem if isinstance(a, cls) else a, kwargs or {}))
            return tree_map(lambda a: cls(a) if isinstance(a, tm.Tensor) else a, out)

    x, y = tm.ones(1), tm.ones(1)
    wx, wy = Wrapped(x), Wrapped(y)
    step, torch_step = _mlp_steps()
    torch_mode = None
    if torch is not None:
        from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

        class TorchPassThrough(TorchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        torch_mode = TorchPassThrough()
    backward, torch_backward = _mlp_backwards([PassThrough(), torch_mode])
    plain_backward, _ = _mlp_backwards([None, None])
    rows = [Row("dispatch", "no-op dispatch mode: tm.add(x, y)", _looped_under([PassThrough()], lambda: tm.add(x, y)),
                baseline=lambda: tm.add(x, y)),
            Row("dispatch", "pytree wrapper subclass: add", lambda: tm.add(wx, wy), baseline=lambda: tm.add(x, y)),
            Row("dispatch", "MLP step under a pass-through dispatch mode", _looped_under([PassThrough()], step, 5),
                baseline=step),
            Row("dispatch", "MLP backward under a pass-through dispatch mode", backward, baseline=plain_backward,
                torch=torch_backward)]
    if torch is not None:

        tx, ty = torch.ones(1), torch.ones(1)
        TorchWrapped = _torch_wrapper_class()
        twx, twy = TorchWrapped(tx), TorchWrapped(ty)
        rows[0].torch = _looped_under([TorchPassThrough()], lambda: torch.add(tx, ty))
        rows[1].torch = lambda: torch.add(twx, twy)
        rows[2].torch = _looped_under([TorchPassThrough()], torch_step, 5)
    return rows


def fake_rows() -> list[Row]:
    """Fake tensors: ``add`` of two (1,) FakeTensors under FakeTensorMode, with the op's result
    metadata in the dispatch cache (cached) and with the cache cleared before each call
    (uncached: the meta rule runs). Baseline: ``add`` of plain tensors, no mode."""
    from tensormodes._subclasses.fake_tensor import FakeTensorMode

    x, y = tm.ones(1), tm.ones(1)
    mode = FakeTensorMode()
    fx, fy = mode.from_tensor(x), mode.from_tensor(y)

    def uncached(clear, add, a, b):
        def run():
            clear()
            add(a, b)
        return run

    rows = [Row("fake", "FakeTensor add, cached", _looped_under([mode], lambda: tm.add(fx, fy)),
                baseline=lambda: tm.add(x, y)),
            Row("fake", "FakeTensor add, uncached", _looped_under([mode], uncached(
                FakeTensorMode.cache_clear, tm.add, fx, fy)), baseline=lambda: tm.add(x, y))]
    if torch is not None:
        from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode

        torch_mode = TorchFakeTensorMode()
        tx, ty = torch_mode.from_tensor(torch.ones(1)), torch_mode.from_tensor(torch.ones(1))
        rows[0].torch = _looped_under([torch_mode], lambda: torch.add(tx, ty), 50)
        rows[1].torch = _looped_under([torch_mode], uncached(TorchFakeTensorMode.cache_clear, torch.add, tx, ty), 20)
    return rows


def _torch_wrapper_class():
    """PyTorch's version of the dispatch group's pytree wrapper."""
    from torch.utils._pytree import tree_map

    class Wrapper(torch.Tensor):
        __torch_function__ = torch._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            self = torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
            self.elem = elem
            return self

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            out = func(*tree_map(lambda a: a.elem if isinstance(a, cls) else a, args),
                       **tree_map(lambda a: a.elem if isinstance(a, cls) else a, kwargs or {}))
            return tree_map(lambda a: cls(a) if isinstance(a, torch.Tensor) else a, out)
    return Wrapper


def make_fx_rows() -> list[Row]:
    """make_fx of a 3-layer MLP training step (Linear 8->16->16->4 with ReLU, cross-entropy, batch 5,
    ``autograd.grad`` of the parameters inside): the whole trace, GraphModule and code included.
    Baseline: the same step run eagerly. Target: <= 0.2x PyTorch's make_fx."""
    from tensormodes.fx.experimental.proxy_tensor import make_fx

    def make(library):
        library.manual_seed(0)
        nn = library.nn
        mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
        params = list(mlp.parameters())

        def step(x, y):
            loss = nn.functional.cross_entropy(mlp(x), y)
            return loss, library.autograd.grad(loss, params)

        return step, library.randn(5, 8), library.tensor([0, 3, 1, 2, 3])

    step, x, y = make(tm)
    row = Row("make_fx", "make_fx: 3-layer MLP step with autograd.grad", lambda: make_fx(step)(x, y),
              baseline=lambda: step(x, y))
    if torch is not None:
        from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

        torch_step, tx, ty = make(torch)
        row.torch = lambda: torch_make_fx(torch_step)(tx, ty)
    return [row]


GROUPS = {"foundation": foundation_rows, "subclass": subclass_rows, "modes": mode_rows, "autograd": autograd_rows,
          "data": data_rows, "optim": optim_rows, "convolution": convolution_rows,
          "fx-trace": fx_trace_rows, "fx-run": fx_run_rows, "ready modes": ready_mode_rows, "meta": meta_rows,
          "random": random_rows, "dispatch": dispatch_rows, "fake": fake_rows,
          "make_fx": make_fx_rows}
BASELINES = {"foundation": "the bare NumPy call", "subclass": "the same call on plain tensors",
             "modes": "the same call with no mode active", "autograd": "HIPS autograd, same network",
             "data": "safetensors.numpy / NumPy indexing", "optim": "the same updates in bare NumPy",
             "convolution": "none", "fx-trace": "none; torch: torch.fx.symbolic_trace",
             "fx-run": "the original function; torch: torch.fx, same rows",
             "ready modes": "the same steps with no mode", "meta": "none; CrossRefMode: the plain forward",
             "random": "NumPy's own generator (other numbers)",
             "dispatch": "the same call with no dispatch mode / on plain tensors",
             "fake": "add of plain tensors, no mode",
             "make_fx": "the same step run eagerly; torch: torch's make_fx"}


def import_time() -> float:
    """Seconds to import tensormodes in a fresh interpreter (best of 5)."""
    code = "import time; t = time.perf_counter(); import tensormodes; print(time.perf_counter() - t)"
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    parser.add_argument("--group", choices=sorted(GROUPS), action="append", help="run only these groups")
    parser.add_argument("--cpu-time", action="store_true", help="time the thread's CPU time, not wall time")
    options = parser.parse_args()
    if options.cpu_time:
        _TIMER[0] = time.thread_time
    repeats, target = (3, 0.02) if options.quick else (9, 0.05)
    print(f"tensormodes benchmarks - Python {platform.python_version()}, NumPy {np.__version__}, "
          f"PyTorch {torch.__version__ if torch else 'not installed'}, {platform.machine()}, {os.cpu_count()} cores")
    print(f"{'row':48s} {'tensormodes':>12s} {'baseline':>10s} {'torch':>9s} {'/base':>7s} {'/torch':>7s}")
    for group in options.group or list(GROUPS):
        print(f"-- {group} (baseline: {BASELINES[group]})")
        for result in measure(GROUPS[group](), repeats, target):
            row = result["row"]
            ours = result["ours"] / getattr(row.ours, "per_call", 1)
            base = result.get("baseline", float("nan")) / getattr(row.baseline, "per_call", 1)
            theirs = result.get("torch", float("nan")) / getattr(row.torch, "per_call", 1)
            print(f"{row.name:48s} {ours:10.0f}ns {base:8.0f}ns {theirs:7.0f}ns "
                  f"{ours / base:6.2f}x {ours / theirs:6.2f}x")
    print(f"import tensormodes: {import_time() * 1000:.0f} ms")


if __name__ == "__main__":
    main()
