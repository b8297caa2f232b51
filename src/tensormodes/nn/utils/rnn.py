"""Variable-length sequences for the recurrent layers (``torch.nn.utils.rnn``): padding them to
one tensor, and packing them into a ``PackedSequence`` that ``RNN``, ``LSTM`` and ``GRU`` run
without computing on the padding.

A packed sequence holds, time step after time step, the elements of the sequences still
running at that step (longest first): ``data`` and ``batch_sizes`` (how many sequences run at
each step). Packing and padding are single indexing ops, so gradients flow through both.

>>> import tensormodes as tm
>>> from tensormodes.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([tm.tensor([1., 2., 3.]), tm.tensor([4., 5.]), tm.tensor([6.])])
>>> packed.data.tolist(), packed.batch_sizes.tolist()
([1.0, 4.0, 6.0, 2.0, 5.0, 3.0], [3, 2, 1])
>>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
>>> padded.tolist(), lengths.tolist()
([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0], [6.0, 0.0, 0.0]], [3, 2, 1])
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

from ..._api import namespace as tm

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequenceFields = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceFields):
    """Holds the data and list of ``batch_sizes`` of a packed sequence.

    Made by ``pack_padded_sequence`` and ``pack_sequence``, never by hand in user code.
    ``sorted_indices`` (None when the batch was already sorted by decreasing length) orders the
    original batch by length; ``unsorted_indices`` is its inverse.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                                 "created manually. They should be instantiated by functions like pack_sequence and "
                                 "pack_padded_sequences in nn.utils.rnn. "
                                 "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        # PyTorch's legacy form: PackedSequence((data, batch_sizes))
        data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """The sequence with ``data`` converted by ``Tensor.to(*args, **kwargs)`` (self if unchanged);
        the indices follow the data's device, ``batch_sizes`` stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = None if self.sorted_indices is None else self.sorted_indices.to(data.device)
        unsorted_indices = None if self.unsorted_indices is None else self.unsorted_indices.to(data.device)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self, *args, **kwargs) -> PackedSequence:
        """The sequence on the CPU."""
        return self.to("cpu")

    def double(self) -> PackedSequence:
        """The sequence with ``float64`` data."""
        return self.to(dtype=tm.float64)

    def float(self) -> PackedSequence:
        """The sequence with ``float32`` data."""
        return self.to(dtype=tm.float32)

    def half(self) -> PackedSequence:
        """The sequence with ``float16`` data."""
        return self.to(dtype=tm.float16)

    def long(self) -> PackedSequence:
        """The sequence with ``int64`` data."""
        return self.to(dtype=tm.int64)

    def int(self) -> PackedSequence:
        """The sequence with ``int32`` data."""
        return self.to(dtype=tm.int32)

    def short(self) -> PackedSequence:
        """The sequence with ``int16`` data."""
        return self.to(dtype=tm.int16)

    def char(self) -> PackedSequence:
        """The sequence with ``int8`` data."""
        return self.to(dtype=tm.int8)

    def byte(self) -> PackedSequence:
        """The sequence with ``uint8`` data."""
        return self.to(dtype=tm.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether the data is on a CUDA device (never, here)."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        """Whether the data is in pinned memory (never, here)."""
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse of a permutation given as a 1-D index tensor (None for None).

    >>> import tensormodes as tm
    >>> from tensormodes.nn.utils.rnn import invert_permutation
    >>> invert_permutation(tm.tensor([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    if permutation is None:
        return None
    output = tm.empty_like(permutation)
    output.scatter_(0, permutation, tm.arange(0, permutation.numel(), device=permutation.device))
    return output


def _lengths_list(lengths) -> list[int]:
    if isinstance(lengths, tm.Tensor):
        return [int(n) for n in lengths.to(tm.int64).tolist()]
    return [int(n) for n in tm.as_tensor(lengths, dtype=tm.int64).tolist()]


def _batch_sizes(lengths: list[int], steps: int | None = None) -> list[int]:
    """How many of the sequences (sorted by decreasing length) run at each time step."""
    steps = lengths[0] if steps is None else steps
    sizes, running = [], len(lengths)
    for t in range(steps):
        while running and lengths[running - 1] <= t:
            running -= 1
        sizes.append(running)
    return sizes


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a Tensor containing padded sequences of variable length.

    ``input`` is ``T x B x *`` (``B x T x *`` with ``batch_first``), its sequences of the given
    ``lengths``. With ``enforce_sorted`` the lengths must be in decreasing order; otherwise the
    batch is sorted here and ``sorted_indices`` records how.

    >>> import tensormodes as tm
    >>> from tensormodes.nn.utils.rnn import pack_padded_sequence
    >>> padded = tm.tensor([[1, 2, 3], [4, 0, 0]])
    >>> packed = pack_padded_sequence(padded, [1, 3], batch_first=True, enforce_sorted=False)
    >>> packed.data.tolist(), packed.batch_sizes.tolist(), packed.sorted_indices.tolist()
    ([4, 1, 0, 0], [2, 1, 1], [1, 0])
    """
    sizes = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(sizes)), key=lambda i: -sizes[i])  # stable, as PyTorch's sort here
        sorted_indices = tm.tensor(order, dtype=tm.int64, device=input.device)
        sizes = [sizes[i] for i in order]
        input = input.index_select(batch_dim, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else (input.shape[0], input.shape[1])
    if len(sizes) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(sizes)} "
                           f"(batch_size={batch})")
    if sizes[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if any(sizes[i] < sizes[i + 1] for i in range(batch - 1)):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                           "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if sizes[0] > steps:
        # PyTorch reads past the end of the input here; a clear error instead of a wrong result
        raise RuntimeError(f"Expected all lengths to be at most the sequence length of the input ({steps}), but "
                           f"got a length of {sizes[0]}")
    batch_sizes = _batch_sizes(sizes)
    # one gather: row t * batch + b of the time-first input, for each running sequence b at each step t
    rows = [t * batch + b for t, running in enumerate(batch_sizes) for b in range(running)]
    time_first = input.transpose(0, 1) if batch_first else input
    data = time_first.reshape(steps * batch, *input.shape[2:])[tm.tensor(rows, dtype=tm.int64, device=input.device)]
    return PackedSequence(data, tm.tensor(batch_sizes, dtype=tm.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None):
    """Pad a packed batch of variable length sequences: the inverse of ``pack_padded_sequence``.

    Returns ``(padded, lengths)``: ``T x B x *`` (``B x T x *`` with ``batch_first``), ``T`` the
    longest length or ``total_length``, in the batch's original order; ``lengths`` an ``int64``
    tensor.
    """
    batch_sizes = [int(n) for n in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    # one gather from the data with a padding row appended: index len(data) is the padding
    pad_row = len(data)
    index, offset = [], 0
    for t in range(steps):
        running = batch_sizes[t] if t < len(batch_sizes) else 0
        index.append([offset + b if b < running else pad_row for b in range(batch)])
        offset += running
    padding = tm.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = tm.cat([data, padding])[tm.tensor(index, dtype=tm.int64, device=data.device).reshape(steps, batch)]
    lengths = tm.tensor([sum(1 for n in batch_sizes if n > b) for b in range(batch)], dtype=tm.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    """Pad a list of variable length Tensors with ``padding_value``: ``T x B x *`` (``B x T x *``
    with ``batch_first``), each ``L_i x *`` sequence padded on ``padding_side`` to the longest.

    >>> import tensormodes as tm
    >>> from tensormodes.nn.utils.rnn import pad_sequence
    >>> pad_sequence([tm.tensor([1, 2]), tm.tensor([3])], batch_first=True, padding_value=-1).tolist()
    [[1, 2], [3, -1]]
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences.unbind(0)) if isinstance(sequences, tm.Tensor) else list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    longest = max(s.size(0) for s in sequences)
    trailing = tuple(first.shape[1:])
    padded = []
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            s = s.expand(s.size(0), *trailing)  # PyTorch copies each sequence in, broadcasting it
        fill = tm.full((longest - s.size(0), *trailing), padding_value, dtype=first.dtype, device=first.device)
        s = s.to(first.dtype)
        padded.append(tm.cat([s, fill] if padding_side == "right" else [fill, s]))
    return tm.stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """Unpad a padded tensor into a list of variable length tensors (the inverse of ``pad_sequence``).

    >>> import tensormodes as tm
    >>> from tensormodes.nn.utils.rnn import unpad_sequence
    >>> [s.tolist() for s in unpad_sequence(tm.tensor([[1, 2], [3, 0]]), tm.tensor([2, 1]), batch_first=True)]
    [[1, 2], [3]]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:length] for seq, length in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences: Iterable, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of variable length Tensors (``pad_sequence`` then ``pack_padded_sequence``).

    >>> import tensormodes as tm
    >>> from tensormodes.nn.utils.rnn import pack_sequence
    >>> pack_sequence([tm.tensor([1]), tm.tensor([2, 3])], enforce_sorted=False).data.tolist()
    [2, 1, 3]
    """
    sequences = list(sequences)
    lengths = tm.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """Unpack a PackedSequence into a list of variable length Tensors (the inverse of ``pack_sequence``)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
