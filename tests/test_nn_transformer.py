"""``TransformerDecoderLayer``, ``TransformerDecoder`` and ``Transformer`` against PyTorch's with
the same weights: outputs, gradients of the inputs and of every parameter (in float32 and
float64, evaluation and training mode), masks of both kinds, ``repr``, state dicts,
initialisation, the causal-mask helper and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm
from tests.torch_oracle import assert_raises_like_torch

from .nn_oracle import check_layer

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)


def _floats(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# Targets of length 4 and memories of length 5, over a batch of 2.
TGT_PADDING = np.array([[False, False, True, False], [False, True, True, False]])
MEMORY_PADDING = np.array([[False, False, False, True, True], [True, False, False, False, False]])
CAUSAL = np.triu(np.ones((4, 4), dtype=bool), 1)
FLOAT_CAUSAL = np.where(CAUSAL, -np.inf, 0.0).astype(np.float32)
MEMORY_MASK = RNG.standard_normal((4, 5)) > 0.8

# Dropout 0 so that training mode (where dropout is random in both libraries) compares exactly too.
DECODER_CASES = [
    ("L.nn.TransformerDecoderLayer(8, 2, 16, 0.0)", [_floats(4, 2, 8), _floats(5, 2, 8)], {}),
    ("L.nn.TransformerDecoderLayer(8, 2, 16, 0.0, activation='gelu', batch_first=True)",
     [_floats(2, 4, 8), _floats(2, 5, 8)], {"tgt_mask": CAUSAL, "memory_key_padding_mask": MEMORY_PADDING}),
    ("L.nn.TransformerDecoderLayer(8, 2, 16, 0.0, norm_first=True, layer_norm_eps=1e-3)",
     [_floats(4, 2, 8), _floats(5, 2, 8)],
     {"tgt_key_padding_mask": np.where(TGT_PADDING, -np.inf, 0.0).astype(np.float32),
      "memory_mask": np.where(MEMORY_MASK, -3.0, 0.5).astype(np.float32)}),
    ("L.nn.TransformerDecoderLayer(8, 4, 16, 0.0, bias=False, activation=L.tanh)", [_floats(4, 8), _floats(5, 8)],
     {"tgt_mask": CAUSAL, "tgt_is_causal": True, "memory_mask": MEMORY_MASK}),
    ("L.nn.TransformerDecoderLayer(8, 2, 16, 0.0, activation=L.nn.GELU(approximate='tanh'))",
     [_floats(4, 2, 8), _floats(4, 2, 8)],
     {"tgt_mask": FLOAT_CAUSAL, "memory_mask": CAUSAL, "memory_is_causal": True, "tgt_key_padding_mask": TGT_PADDING}),
    ("L.nn.TransformerDecoderLayer(8, 2, 16, 0.0)", [_floats(4, 2, 8), _floats(5, 2, 8)],
     {"tgt_mask": RNG.standard_normal((4, 4, 4)) > 0.7}),
    ("L.nn.TransformerDecoderLayer(8, 2, 16, 0.0, dtype=L.float64)",
     [_floats(4, 2, 8, dtype=np.float64), _floats(5, 2, 8, dtype=np.float64)],
     {"tgt_mask": FLOAT_CAUSAL.astype(np.float64), "memory_key_padding_mask": MEMORY_PADDING}),
    ("L.nn.TransformerDecoderLayer(8, 2, dropout=0.0)", [_floats(3, 2, 8), _floats(5, 2, 8)], {}),
    ("L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, 0.0), 2)",
     [_floats(4, 2, 8), _floats(5, 2, 8)], {}),
    ("L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, 0.0, batch_first=True), 3, "
     "norm=L.nn.LayerNorm(8))", [_floats(2, 4, 8), _floats(2, 5, 8)],
     {"tgt_mask": FLOAT_CAUSAL, "tgt_key_padding_mask": np.where(TGT_PADDING, -np.inf, 0.0).astype(np.float32),
      "memory_key_padding_mask": MEMORY_PADDING}),
    ("L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, 0.0, norm_first=True), 2)",
     [_floats(4, 8), _floats(5, 8)], {"tgt_mask": CAUSAL, "memory_mask": MEMORY_MASK}),
    ("L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, 0.0), 2)", [_floats(4, 2, 8), _floats(5, 2, 8)],
     {"tgt_mask": FLOAT_CAUSAL, "tgt_is_causal": False}),
]

TRANSFORMER_CASES = [
    ("L.nn.Transformer(8, 2, 2, 2, 16, 0.0)", [_floats(5, 2, 8), _floats(4, 2, 8)], {}),
    ("L.nn.Transformer(8, 2, 1, 2, 16, 0.0, batch_first=True, norm_first=True)", [_floats(2, 5, 8), _floats(2, 4, 8)],
     {"src_mask": RNG.standard_normal((5, 5)) > 0.8, "tgt_mask": CAUSAL, "memory_mask": MEMORY_MASK,
      "src_key_padding_mask": MEMORY_PADDING, "tgt_key_padding_mask": TGT_PADDING,
      "memory_key_padding_mask": MEMORY_PADDING}),
    ("L.nn.Transformer(8, 4, 2, 1, 16, 0.0, activation='gelu', bias=False, layer_norm_eps=1e-4)",
     [_floats(5, 8), _floats(4, 8)], {"tgt_mask": FLOAT_CAUSAL, "src_key_padding_mask": MEMORY_PADDING[0]}),
    ("L.nn.Transformer(8, 2, 1, 1, 16, 0.0, dtype=L.float64)",
     [_floats(5, 2, 8, dtype=np.float64), _floats(4, 2, 8, dtype=np.float64)],
     {"tgt_mask": FLOAT_CAUSAL.astype(np.float64), "tgt_is_causal": True,
      "memory_key_padding_mask": np.where(MEMORY_PADDING, -np.inf, 0.0)}),
    ("L.nn.Transformer(8, 2, dim_feedforward=16, dropout=0.0, custom_encoder=L.nn.TransformerEncoder("
     "L.nn.TransformerEncoderLayer(8, 2, 32, 0.0), 1), custom_decoder=L.nn.TransformerDecoder("
     "L.nn.TransformerDecoderLayer(8, 2, 32, 0.0), 2, norm=L.nn.LayerNorm(8)))",
     [_floats(5, 2, 8), _floats(4, 2, 8)], {"src_mask": _floats(5, 5)}),
]


def _case_id(case) -> str:
    return f"{case[0].removeprefix('L.nn.')}-{'-'.join(case[2])}"


@pytest.mark.torch
@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("expression, inputs, kwargs", DECODER_CASES + TRANSFORMER_CASES,
                         ids=[_case_id(c) for c in DECODER_CASES + TRANSFORMER_CASES])
def test_decoder_and_transformer_match_torch(expression, inputs, kwargs, train):
    double = inputs[0].dtype == np.float64
    check_layer(torch, expression, inputs, kwargs, train=train, rtol=1e-10 if double else 1e-5,
                atol=1e-10 if double else 1e-5)


@pytest.mark.torch
def test_decoder_layer_with_default_dropout_matches_torch_in_eval():
    check_layer(torch, "L.nn.TransformerDecoderLayer(8, 2)", [_floats(3, 2, 8), _floats(5, 2, 8)])


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.TransformerDecoderLayer(8, 2)",
    "L.nn.TransformerDecoderLayer(8, 2, 16, activation=L.nn.GELU(), bias=False, norm_first=True)",
    "L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16), 2, norm=L.nn.LayerNorm(8))",
    "L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True), 1)",
    "L.nn.Transformer(16, 4, 2, 3, 32)",
    "L.nn.Transformer(8, 2, 1, 1, 16, bias=False, batch_first=True, norm_first=True, dtype=L.float64)",
])
def test_repr_and_state_dict_match_torch(expression):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = eval(expression, {"L": tm}), eval(expression, {"L": torch})
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape), str(v.dtype).split(".")[1]) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape), str(v.dtype).split(".")[1]) for k, v in theirs.state_dict().items()]


@pytest.mark.torch
@pytest.mark.parametrize("expression", [
    "L.nn.TransformerDecoderLayer(8, 2, activation='tanh')",
    "L.nn.Transformer(8, 2, activation='sigmoid')",
    "L.nn.Transformer(8, 3)",
    "L.nn.Transformer(8, 2, 1, 1, 16)(L.ones(5, 2, 8), L.ones(4, 3, 8))",
    "L.nn.Transformer(8, 2, 1, 1, 16, batch_first=True)(L.ones(2, 5, 8), L.ones(3, 4, 8))",
    "L.nn.Transformer(8, 2, 1, 1, 16)(L.ones(5, 2, 8), L.ones(4, 2, 6))",
    "L.nn.Transformer(8, 2, 1, 1, 16)(L.ones(5, 6), L.ones(4, 8))",
    "L.nn.Transformer(8, 2, 1, 1, 16)(L.ones(5, 2, 8), L.ones(4, 2, 8), tgt_is_causal=True)",
    "L.nn.Transformer(8, 2, 1, 1, 16)(L.ones(5, 2, 8), L.ones(4, 2, 8), memory_mask=L.ones(4, 4))",
    "L.nn.TransformerDecoderLayer(8, 2, 16)(L.ones(4, 2, 8), L.ones(5, 3, 8))",
    "L.nn.TransformerDecoderLayer(8, 2, 16)(L.ones(4, 2, 8), L.ones(5, 2, 8), tgt_key_padding_mask=L.ones(2, 5))",
    "L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16), 2)(L.ones(4, 2, 8), L.ones(5, 2, 8), "
    "memory_is_causal=True)",
])
def test_construction_and_call_errors_match_torch(expression):
    assert_raises_like_torch(expression)


@pytest.mark.torch
@pytest.mark.parametrize("size, kwargs", [(1, {}), (4, {}), (3, {"dtype": "float64"}), (5, {"device": "cpu"}),
                                          (2, {"dtype": "bfloat16"})])
def test_generate_square_subsequent_mask_matches_torch(size, kwargs):
    ours = tm.nn.Transformer.generate_square_subsequent_mask(
        size, **{k: getattr(tm, v) if k == "dtype" else v for k, v in kwargs.items()})
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(
        size, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()})
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1] and ours.device.type == "cpu"
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def test_transformer_warns_about_nested_tensors_like_torch():
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                         r"encoder_layer.self_attn.batch_first was not True\(use batch_first"):
        model = tm.nn.Transformer(8, 2, 1, 1, 16)
    assert model.encoder.use_nested_tensor is False and (model.d_model, model.nhead, model.batch_first) == (8, 2, False)


def test_decoder_layers_are_independent_deep_copies():
    layer = tm.nn.TransformerDecoderLayer(8, 2, 16)
    decoder = tm.nn.TransformerDecoder(layer, 2)
    first, second = decoder.layers
    assert first is not layer and second is not first and decoder.num_layers == 2 and decoder.norm is None
    assert first.multihead_attn.in_proj_weight.tolist() == layer.multihead_attn.in_proj_weight.tolist()
    with tm.no_grad():
        first.linear1.weight.add_(1.0)
    assert second.linear1.weight.tolist() == layer.linear1.weight.tolist()
    assert len(list(decoder.parameters())) == 2 * len(list(layer.parameters()))


def test_decoder_detects_a_causal_target_mask():
    """``tgt_is_causal=None`` is resolved once by the stack from ``tgt_mask`` and handed to every layer."""
    seen = []
    decoder = tm.nn.TransformerDecoder(tm.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True), 2)
    for layer in decoder.layers:
        layer.register_forward_pre_hook(lambda module, args, kwargs: seen.append(kwargs["tgt_is_causal"]),
                                        with_kwargs=True)
    tgt, memory = tm.ones(1, 4, 8), tm.ones(1, 3, 8)
    decoder(tgt, memory, tgt_mask=tm.nn.Transformer.generate_square_subsequent_mask(4))
    decoder(tgt, memory, tgt_mask=tm.from_numpy(CAUSAL.copy()))
    decoder(tgt, memory, tgt_mask=tm.zeros(4, 4))
    decoder(tgt, memory, tgt_mask=tm.zeros(4, 4), tgt_is_causal=True)
    decoder(tgt, memory)
    assert seen == [True, True, True, True, False, False, True, True, False, False]


@pytest.mark.torch
def test_transformer_initialisation_is_xavier_uniform_like_torch():
    """Every matrix (the attention projections, ``out_proj`` included, and the feed-forward
    weights) is drawn again from U(-b, b), b = sqrt(6 / (fan_in + fan_out)); vectors keep their
    layer's own initialisation. Compared by statistics with a PyTorch model of the same shape."""
    tm.manual_seed(0)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = dict(tm.nn.Transformer(64, 4, 1, 1, 256).named_parameters())
        theirs = dict(torch.nn.Transformer(64, 4, 1, 1, 256).named_parameters())
    assert list(ours) == list(theirs)
    for name, param in ours.items():
        mine, reference = param.detach().numpy(), theirs[name].detach().numpy()
        if mine.ndim == 1:
            # Zero attention biases, ones and zeros in the norms, Linear's U(+-1/sqrt(fan_in)) biases.
            if "norm" in name or "in_proj" in name or "out_proj" in name:
                assert mine.tolist() == reference.tolist(), name
            else:
                assert np.abs(mine).max() <= 1 / np.sqrt(param.size(-1) if "linear2" in name else 64), name
            continue
        bound = np.sqrt(6 / sum(mine.shape))
        for values in (mine, reference):
            # At least 4,096 seeded uniform values each: within the bound, reaching above 90% of it,
            # std b/sqrt(3) within 4% (over 4 sigma).
            assert bound * 0.9 < np.abs(values).max() <= bound, name
            assert abs(values.std() / (bound / np.sqrt(3)) - 1) < 0.04, name
    # out_proj's own initialisation (Linear's, bound 1/8) was replaced by Xavier's (bound 0.217).
    assert np.abs(ours["decoder.layers.0.multihead_attn.out_proj.weight"].detach().numpy()).max() > 0.2


def test_transformer_resets_custom_parts_too():
    tm.manual_seed(1)
    encoder = tm.nn.TransformerEncoder(tm.nn.TransformerEncoderLayer(8, 2, 16), 1, enable_nested_tensor=False)
    before = encoder.layers[0].linear1.weight.tolist()
    model = tm.nn.Transformer(8, 2, custom_encoder=encoder, num_decoder_layers=1, dim_feedforward=16)
    assert model.encoder is encoder and encoder.layers[0].linear1.weight.tolist() != before
    assert len(model.decoder.layers) == 1
