"""The showcase tools (meta execution, ``FlopCounterMode``, ``tensormodes trace``) on the patterns
real models use (issue 29): causal attention, factories without ``device=``, closures holding
submodules, ``ModuleList`` blocks, tied weights, tuple states. The models are in
``tests/real_models.py``; PyTorch is the oracle where it counts the same thing."""

from __future__ import annotations

import warnings

import pytest

import tensormodes as tm
import tensormodes.nn.functional as F

from .real_models import GPT_SOURCE, LSTM_SOURCE, define

try:
    import torch
except ImportError:  # the cross-reference oracle is optional
    torch = None


# -- 1. meta execution: composites make their tensors on the inputs' device ------------------

def test_causal_sdpa_runs_on_meta_inputs():
    q = tm.empty(2, 3, 5, 8, device="meta")
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.is_meta and out.shape == (2, 3, 5, 8)


def test_causal_sdpa_runs_under_the_meta_device_context():
    with tm.device("meta"):
        q = tm.empty(2, 3, 5, 8)
        out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.is_meta and out.shape == (2, 3, 5, 8)


META_COMPOSITES = [
    ("one_hot", lambda: F.one_hot(tm.zeros(3, dtype=tm.long, device="meta"), 5), (3, 5)),
    ("circular pad", lambda: F.pad(tm.empty(1, 2, 5, device="meta"), (2, 1), mode="circular"), (1, 2, 8)),
    ("init.eye_", lambda: tm.nn.init.eye_(tm.empty(2, 3, device="meta")), (2, 3)),
    ("init.dirac_", lambda: tm.nn.init.dirac_(tm.empty(2, 2, 3, device="meta")), (2, 2, 3)),
    ("embedding max_norm", lambda: F.embedding(tm.zeros(3, dtype=tm.long, device="meta"),
                                                tm.empty(5, 4, device="meta"), max_norm=1.0), (3, 4)),
    ("causal encoder", lambda: tm.nn.TransformerEncoder(
        tm.nn.TransformerEncoderLayer(8, 2, 16, device="meta"), 2, enable_nested_tensor=False)(
        tm.empty(3, 2, 8, device="meta"), is_causal=True,
        mask=tm.nn.Transformer.generate_square_subsequent_mask(3, device="meta")), (3, 2, 8)),
]


@pytest.mark.parametrize(("name", "call", "shape"), META_COMPOSITES, ids=[c[0] for c in META_COMPOSITES])
def test_composites_make_their_tensors_on_the_inputs_device(name, call, shape):
    out = call()
    assert out.is_meta and tuple(out.shape) == shape


def test_a_gpt_runs_on_meta_under_the_device_context():
    GPT = define(GPT_SOURCE, tm)["GPT"]
    with tm.device("meta"):
        model = GPT()
        idx = tm.zeros(2, 8, dtype=tm.long)
        logits, loss = model(idx, idx)
    loss.backward()
    assert logits.is_meta and logits.shape == (2, 8, 32) and loss.shape == ()
    assert model.tok.weight.grad.is_meta and model.tok.weight.grad.shape == (32, 16)
