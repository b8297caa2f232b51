"""tensormodes.nn.utils.rnn: padding and packing, and packed sequences through RNN / LSTM / GRU."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.nn.utils import rnn as R

A, B, C = tm.tensor([1.0, 2.0, 3.0]), tm.tensor([4.0, 5.0]), tm.tensor([6.0])


def test_pack_and_pad_literals():
    packed = R.pack_sequence([A, B, C])
    assert packed.data.tolist() == [1.0, 4.0, 6.0, 2.0, 5.0, 3.0]
    assert packed.batch_sizes.tolist() == [3, 2, 1] and packed.batch_sizes.dtype == tm.int64
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    assert repr(packed) == ("PackedSequence(data=tensor([1., 4., 6., 2., 5., 3.]), batch_sizes=tensor([3, 2, 1]), "
                            "sorted_indices=None, unsorted_indices=None)")
    padded, lengths = R.pad_packed_sequence(packed)
    assert padded.tolist() == [[1.0, 4.0, 6.0], [2.0, 5.0, 0.0], [3.0, 0.0, 0.0]]
    assert lengths.tolist() == [3, 2, 1] and lengths.dtype == tm.int64
    assert R.pad_packed_sequence(packed, batch_first=True, padding_value=-1.0, total_length=4)[0].tolist() == [
        [1.0, 2.0, 3.0, -1.0], [4.0, 5.0, -1.0, -1.0], [6.0, -1.0, -1.0, -1.0]]

    unsorted = R.pack_sequence([B, A, C], enforce_sorted=False)
    assert unsorted.data.tolist() == [1.0, 4.0, 6.0, 2.0, 5.0, 3.0]
    assert unsorted.sorted_indices.tolist() == [1, 0, 2] and unsorted.unsorted_indices.tolist() == [1, 0, 2]
    padded, lengths = R.pad_packed_sequence(unsorted, batch_first=True)
    assert padded.tolist() == [[4.0, 5.0, 0.0], [1.0, 2.0, 3.0], [6.0, 0.0, 0.0]] and lengths.tolist() == [2, 3, 1]
    assert [s.tolist() for s in R.unpack_sequence(unsorted)] == [[4.0, 5.0], [1.0, 2.0, 3.0], [6.0]]

    assert R.pad_sequence([A, B, C]).tolist() == [[1.0, 4.0, 6.0], [2.0, 5.0, 0.0], [3.0, 0.0, 0.0]]
    assert R.pad_sequence([A, B, C], batch_first=True, padding_value=-1, padding_side="left").tolist() == [
        [1.0, 2.0, 3.0], [-1.0, 4.0, 5.0], [-1.0, -1.0, 6.0]]
    assert [s.tolist() for s in R.unpad_sequence(R.pad_sequence([A, B]), tm.tensor([3, 2]))] == [
        [1.0, 2.0, 3.0], [4.0, 5.0]]


def test_pack_padded_sequence_batch_first_and_float_lengths():
    x = tm.arange(9.0).reshape(3, 3)
    packed = R.pack_padded_sequence(x.T, [3, 2, 1], batch_first=True)
    assert packed.data.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 6.0]
    assert R.pack_padded_sequence(x, tm.tensor([3.7, 2.0, 1.0])).batch_sizes.tolist() == [3, 2, 1]
    assert R.pack_padded_sequence(x, tm.tensor([2, 3, 1]), enforce_sorted=False).data.tolist() == [
        1.0, 0.0, 2.0, 4.0, 3.0, 7.0]


def test_gradients_flow_through_packing_and_padding():
    x = tm.arange(6.0).reshape(3, 2).requires_grad_()
    packed = R.pack_padded_sequence(x, [3, 1])
    padded, _ = R.pad_packed_sequence(packed)
    (padded * tm.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0], [3.0, 0.0], [5.0, 0.0]]


def test_errors():
    x = R.pad_sequence([A, B, C])
    with pytest.raises(RuntimeError, match="^`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                                           "is True. You can pass `enforce_sorted=False`"):
        R.pack_padded_sequence(x, [1, 2, 3])
    with pytest.raises(RuntimeError, match="^Length of all samples has to be greater than 0, but found an element in "
                                           "'lengths' that is <= 0$"):
        R.pack_padded_sequence(x, [3, 2, 0])
    with pytest.raises(RuntimeError, match=r"^Expected `len\(lengths\)` to be equal to batch_size, but got 2 "
                                           r"\(batch_size=3\)$"):
        R.pack_padded_sequence(x, [3, 2])
    with pytest.raises(RuntimeError, match=r"^Expected all lengths to be at most the sequence length of the input "
                                           r"\(3\), but got a length of 4$"):
        R.pack_padded_sequence(x, [4, 2, 1])  # PyTorch reads past the input here
    with pytest.raises(ValueError, match="^Expected total_length to be at least the length of the longest sequence in "
                                         "input, but got total_length=2 and max sequence length being 3$"):
        R.pad_packed_sequence(R.pack_sequence([A, B, C]), total_length=2)
    with pytest.raises(RuntimeError, match="^received an empty list of sequences$"):
        R.pad_sequence([])
    with pytest.raises(RuntimeError, match="^Expected padding_side to be one of left or right, but got mid.$"):
        R.pad_sequence([A], padding_side="mid")


def _run_each_alone(module, sequences, lstm):
    outputs, finals = [], []
    for s in sequences:
        out, state = module(s.unsqueeze(1))
        outputs.append(out.squeeze(1))
        finals.append(state[0] if lstm else state)
    return outputs, finals


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_packed_run_equals_each_sequence_run_alone(kind):
    tm.manual_seed(3)
    module = getattr(tm.nn, kind)(2, 3, num_layers=2, bidirectional=True)
    sequences = [tm.randn(2, 2), tm.randn(4, 2), tm.randn(3, 2)]
    out, state = module(R.pack_sequence(sequences, enforce_sorted=False))
    assert isinstance(out, R.PackedSequence) and out.data.shape == (9, 6)
    alone, finals = _run_each_alone(module, sequences, kind == "LSTM")
    for got, expected in zip(R.unpack_sequence(out), alone):
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    hidden = state[0] if kind == "LSTM" else state
    for b, final in enumerate(finals):
        np.testing.assert_allclose(hidden[:, b].detach().numpy(), final[:, 0].detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_packed_input_errors():
    lstm = tm.nn.LSTM(2, 3)
    packed = R.pack_sequence([tm.ones(2, 2), tm.ones(1, 2)])
    with pytest.raises(RuntimeError, match=r"^Expected hidden\[0\] size \(1, 2, 3\), got \[1, 3, 3\]$"):
        lstm(packed, (tm.zeros(1, 3, 3), tm.zeros(1, 3, 3)))
    with pytest.raises(RuntimeError, match="^input.size\\(-1\\) must be equal to input_size. Expected 2, got 3$"):
        lstm(R.pack_sequence([tm.ones(2, 3)]))


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_same_as_pytorch(kind):
    import torch
    from torch.nn.utils import rnn as TR

    tm.manual_seed(5)
    ours = getattr(tm.nn, kind)(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    theirs = getattr(torch.nn, kind)(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(0)
    data = [rng.standard_normal((n, 3)).astype(np.float32) for n in (3, 5, 1, 4)]
    mine = [tm.tensor(d, requires_grad=True) for d in data]
    yours = [torch.tensor(d, requires_grad=True) for d in data]
    lengths = [len(d) for d in data]
    out, state = ours(R.pack_padded_sequence(R.pad_sequence(mine, batch_first=True), lengths, batch_first=True,
                                             enforce_sorted=False))
    tout, tstate = theirs(TR.pack_padded_sequence(TR.pad_sequence(yours, batch_first=True), lengths,
                                                  batch_first=True, enforce_sorted=False))
    np.testing.assert_allclose(out.data.detach().numpy(), tout.data.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert out.batch_sizes.tolist() == tout.batch_sizes.tolist()
    assert out.sorted_indices.tolist() == tout.sorted_indices.tolist()
    hidden, thidden = (state[0], tstate[0]) if kind == "LSTM" else (state, tstate)
    np.testing.assert_allclose(hidden.detach().numpy(), thidden.detach().numpy(), rtol=1e-5, atol=1e-6)
    padded, _ = R.pad_packed_sequence(out, batch_first=True)
    tpadded, _ = TR.pad_packed_sequence(tout, batch_first=True)
    (padded.sum() + hidden.sum()).backward()
    (tpadded.sum() + thidden.sum()).backward()
    for m, y in zip(mine, yours):
        np.testing.assert_allclose(m.grad.numpy(), y.grad.numpy(), rtol=1e-4, atol=1e-5)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.torch
def test_given_initial_state_is_permuted_as_pytorch():
    import torch
    from torch.nn.utils import rnn as TR

    tm.manual_seed(2)
    ours = tm.nn.GRU(2, 3, num_layers=2)
    theirs = torch.nn.GRU(2, 3, num_layers=2)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(3)
    data = [rng.standard_normal((n, 2)).astype(np.float32) for n in (2, 4, 1)]
    h0 = rng.standard_normal((2, 3, 3)).astype(np.float32)
    out, h = ours(R.pack_sequence([tm.tensor(d) for d in data], enforce_sorted=False), tm.tensor(h0))
    tout, th = theirs(TR.pack_sequence([torch.tensor(d) for d in data], enforce_sorted=False), torch.tensor(h0))
    np.testing.assert_allclose(out.data.detach().numpy(), tout.data.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-5, atol=1e-6)
    ties = R.pack_padded_sequence(tm.zeros(3, 6), [2, 3, 2, 3, 1, 3], enforce_sorted=False)
    assert ties.sorted_indices.tolist() == [1, 3, 5, 0, 2, 4]  # stable for equal lengths, as PyTorch
