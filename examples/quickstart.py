"""A short tour of tensormodes: tensors, PyTorch's rules, and the override protocol.

Run: python examples/quickstart.py
"""

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes.overrides import TorchFunctionMode, explain, resolve_name

print("== tensors, PyTorch style")
x = tm.tensor([[1.0, 2.0], [3.0, 4.0]])
_ = tm.manual_seed(0)
y = tm.randn(2, 2) * 2 + 1
z = (x @ y).relu().sum(dim=1, keepdim=True)
print("x =", x)
print("z = (x @ y).relu().sum(dim=1, keepdim=True) =", z)
print("int tensor / 2 ->", tm.tensor([1, 2]) / 2, "(true division gives the default float dtype)")
print("int32 tensor + 2.5 ->", (tm.tensor([1, 2], dtype=tm.int32) + 2.5).dtype)

print("\n== views share memory")
v = x.t()
v[0, 0] = -1
print("after x.t()[0, 0] = -1, x =", x)
print("cat shape:", tm.cat([x, y]).shape)

print("\n== a tensor subclass keeps its type through every operation")


class Tagged(tm.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs)


t = tm.ones(3).as_subclass(Tagged)
print("type(t + 1):", type(t + 1).__name__, "| type(t.sum()):", type(t.sum()).__name__)

print("\n== a mode sees every call in its scope, factories included")


class Logger(TorchFunctionMode):
    def __init__(self):
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append(resolve_name(func))
        return func(*args, **(kwargs or {}))


with Logger() as log:
    h = F.relu(tm.zeros(2, 3) + tm.ones(3))
    h.sum(dim=0)
for name in log.calls:
    print("  ", name)

print("\n== how a call would be dispatched right now")
with Logger():
    print(explain(tm.add, t, 1))
