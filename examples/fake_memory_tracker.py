"""A GPT's peak activation memory, measured without data: a memory-tracking dispatch mode
under FakeTensorMode.

``FakeTensorMode`` runs the whole training step — forward, backward, no data, no memory: each
op computes only its result's shape, dtype and strides. A ``TorchDispatchMode`` entered inside
it runs first (the fake mode is an *infra* mode) and sees every aten op with fake tensors: it
counts the bytes of each new tensor (results that alias an input, as the op's schema says, take
no new memory) and gives them back when the tensor is freed, so its high-water mark is the peak
memory of the tensors the step creates — activations saved for backward, then gradients.

The model is GPT-2 small's shape (768 wide, 12 heads, 12 blocks, a 50257-token vocabulary,
1024 positions), built from ``tm.nn`` inside the fake mode, run on a batch of 8 full-length
sequences: 163 M parameters (the output layer is not tied to the embedding) and some 20 GiB of
memory for the step, on a machine that could not hold them.

Run: python examples/fake_memory_tracker.py   (prints the parameter count and the peaks)
"""

import math
import weakref

import tensormodes as tm
import tensormodes.nn as nn
import tensormodes.nn.functional as F
from tensormodes._subclasses.fake_tensor import FakeTensorMode
from tensormodes.utils._python_dispatch import TorchDispatchMode


class MemoryTracker(TorchDispatchMode):
    """Live bytes of the tensors ops create, and their high-water mark."""

    def __init__(self):
        super().__init__()
        self.live = 0
        self.peak = 0

    def _free(self, nbytes: int) -> None:
        self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        results = out if isinstance(out, (tuple, list)) else (out,)
        for result, declared in zip(results, func._schema.returns):
            if isinstance(result, tm.Tensor) and declared.alias_info is None:  # new storage
                nbytes = result.numel() * result.element_size()
                self.live += nbytes
                weakref.finalize(result, self._free, nbytes)
        self.peak = max(self.peak, self.live)
        return out


class Block(nn.Module):
    """A GPT-2 block: pre-norm causal self-attention and a GELU MLP, each with a residual."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.fc_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(self.ln_1(x)).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.fc_proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab: int = 50257, positions: int = 1024, width: int = 768, heads: int = 12,
                 layers: int = 12):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(positions, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        x = self.wte(tokens) + self.wpe(tm.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def measure(batch: int = 8, length: int = 1024, layers: int = 12) -> dict:
    """Parameters and peak memory (bytes) of one forward + backward step, without data."""
    with FakeTensorMode():
        model = GPT(layers=layers)
        tokens = tm.randint(0, 50257, (batch, length))
        targets = tm.randint(0, 50257, (batch, length))
        with MemoryTracker() as tracker:
            logits = model(tokens)
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
            forward_peak = tracker.peak
            loss.backward()
        parameters = sum(p.numel() for p in model.parameters())
    return {"parameters": parameters, "forward_peak": forward_peak, "step_peak": tracker.peak}


def main() -> None:
    found = measure()
    gib = 2 ** 30
    print(f"GPT-2 small shape: {found['parameters']:,} parameters "
          f"({found['parameters'] * 4 / gib:.2f} GiB in float32)")
    print(f"peak memory of the forward pass (batch 8 x 1024 tokens): {found['forward_peak'] / gib:.2f} GiB")
    print(f"peak memory of forward + backward: {found['step_peak'] / gib:.2f} GiB")
    print(f"(no data was allocated: log2 of the activation bytes is {math.log2(found['step_peak']):.1f})")


if __name__ == "__main__":
    main()
