"""A logging mode at the dispatch level over one training step of a small MLP.

``__torch_function__`` modes see the public calls a program makes; a ``TorchDispatchMode``
sees what runs below autograd — PyTorch's aten ops, the composites decomposed
(``F.linear`` is ``t`` and ``addmm``), and the backward pass's ops after the forward's.

Run: python examples/dispatch_logging.py   (prints one aten op per line)
"""

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.utils._python_dispatch import TorchDispatchMode


class AtenLog(TorchDispatchMode):
    """Records each aten op with the shapes of its tensor arguments."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        shapes = [list(a.shape) for a in args if isinstance(a, tm.Tensor)]
        self.lines.append(f"{func}  {shapes}")
        return func(*args, **(kwargs or {}))


def training_step(log: TorchDispatchMode | None = None) -> float:
    tm.manual_seed(0)
    model = tm.nn.Sequential(tm.nn.Linear(4, 8), tm.nn.ReLU(), tm.nn.Linear(8, 3))
    optimizer = tm.optim.SGD(model.parameters(), lr=0.1)
    x, y = tm.randn(5, 4), tm.tensor([0, 1, 2, 0, 1])
    with log if log is not None else tm._C._DisableTorchDispatch():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


def main() -> None:
    log = AtenLog()
    training_step(log)
    print("\n".join(log.lines))


if __name__ == "__main__":
    main()
