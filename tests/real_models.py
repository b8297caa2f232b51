"""Small models written the way well-known open-source models are (a GPT with causal attention,
``arange`` positions, tied weights and a ``ModuleList`` of blocks; an LSTM language model), as
source text over ``L`` (``tensormodes`` or ``torch``), so that the same model runs on both
libraries and in scripts given to ``tensormodes trace``."""

from __future__ import annotations

import textwrap

GPT_SOURCE = textwrap.dedent("""\
    F = L.nn.functional


    class CausalSelfAttention(L.nn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.heads = heads
            self.qkv = L.nn.Linear(width, 3 * width)
            self.proj = L.nn.Linear(width, width)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


    class Block(L.nn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.ln1, self.ln2 = L.nn.LayerNorm(width), L.nn.LayerNorm(width)
            self.attn = CausalSelfAttention(width, heads)
            self.fc, self.act, self.out = L.nn.Linear(width, 4 * width), L.nn.GELU(), L.nn.Linear(4 * width, width)
            self.mlpf = lambda x: self.out(self.act(self.fc(x)))  # a closure holding submodules (minGPT)

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlpf(self.ln2(x))


    class GPT(L.nn.Module):
        def __init__(self, vocab=32, width=16, heads=2, layers=2, context=8):
            super().__init__()
            self.tok = L.nn.Embedding(vocab, width)
            self.pos = L.nn.Embedding(context, width)
            self.blocks = L.nn.ModuleList([Block(width, heads) for _ in range(layers)])
            self.ln = L.nn.LayerNorm(width)
            self.head = L.nn.Linear(width, vocab, bias=False)
            self.head.weight = self.tok.weight  # tied weights

        def forward(self, idx, targets=None):
            T = idx.shape[1]
            positions = L.arange(T)  # no device=: follows `with L.device(...)` only
            x = self.tok(idx) + self.pos(positions)
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln(x))
            if targets is None:
                return logits
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
""")

LSTM_SOURCE = textwrap.dedent("""\
    class LanguageModel(L.nn.Module):
        def __init__(self, vocab=20, width=8, hidden=12):
            super().__init__()
            self.embed = L.nn.Embedding(vocab, width)
            self.rnn = L.nn.LSTM(width, hidden, num_layers=2, batch_first=True)
            self.decode = L.nn.Linear(hidden, vocab)

        def forward(self, idx, state):
            output, state = self.rnn(self.embed(idx), state)
            return self.decode(output), state
""")


def define(source: str, library) -> dict:
    """The names ``source`` defines, with ``L`` bound to ``library``."""
    namespace = {"L": library}
    exec(compile(source, f"<{library.__name__} model>", "exec"), namespace)  # noqa: S102 - our own test models
    return namespace


def script(source: str, body: str) -> str:
    """A script for ``tensormodes trace``: the model's source over tensormodes, then ``body``."""
    return "import tensormodes as L\n" + source + "\n" + textwrap.dedent(body)
