"""Error fidelity leftovers, each against PyTorch 2.13 when installed and literals otherwise: the
2-D FFTs refuse ``dim=None`` (their ``dim`` is ``int[1]``, not optional, unlike the N-D ones'), the
``add*`` products' in-place forms (``addmm_``, ``addmv_``, ``baddbmm_``, ``addr_``) name a
wrong-sized ``self`` in PyTorch's words, and an op's own check on what it writes in place
(``float_power_``'s dtype) comes before the shape rule's."""

from __future__ import annotations

import pytest

import tensormodes as tm

TWO_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]


def _error(fn):
    with pytest.raises(Exception) as caught:  # noqa: PT011 - the class is part of what is compared
        fn()
    return type(caught.value).__name__, str(caught.value)


@pytest.mark.parametrize("name", TWO_D)
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_two_dimensional_ffts_refuse_dim_none(name, device):
    x = tm.ones(2, 3, device=device)
    expected = ("TypeError", f"fft_{name}(): argument 'dim' must be tuple of ints, not NoneType")
    assert _error(lambda: getattr(tm.fft, name)(x, dim=None)) == expected
    assert getattr(tm.fft, name.replace("2", "n"))(x, dim=None).shape == getattr(tm.fft, name)(x).shape


@pytest.mark.torch
@pytest.mark.parametrize("name", TWO_D)
def test_two_dimensional_ffts_refuse_dim_none_as_pytorch(name):
    torch = pytest.importorskip("torch")
    assert _error(lambda: getattr(tm.fft, name)(tm.ones(2, 3), dim=None)) == \
        _error(lambda: getattr(torch.fft, name)(torch.ones(2, 3), dim=None))


IN_PLACE_PRODUCTS = {
    "addmv_": (lambda lib: lib.ones(1).addmv_(lib.ones(3, 2), lib.ones(2)),
               "Bad in-place call: input tensor size [1] and output tensor size [3] should match"),
    "addmv_ of a 0-dim self": (lambda lib: lib.ones(()).addmv_(lib.ones(3, 2), lib.ones(2)),
                               "Bad in-place call: input tensor size [] and output tensor size [3] should match"),
    "addmm_": (lambda lib: lib.ones(1, 4).addmm_(lib.ones(3, 2), lib.ones(2, 4)),
               "Bad in-place call: input tensor size [1, 4] and output tensor size [3, 4] should match"),
    "baddbmm_": (lambda lib: lib.ones(1, 3, 4).baddbmm_(lib.ones(2, 3, 2), lib.ones(2, 2, 4)),
                 "Bad in-place call: input tensor size [1, 3, 4] and output tensor size [2, 3, 4] should match"),
    "addr_": (lambda lib: lib.ones(1, 3).addr_(lib.ones(2), lib.ones(3)),
              "size mismatch, input: [1, 3], v1: [2], v2: [3]"),
    "addr_ of a vector": (lambda lib: lib.ones(3).addr_(lib.ones(2), lib.ones(3)),
                          "2D tensor expected, got 1D tensor for input"),
    "float_power_": (lambda lib: lib.ones(1, 3).float_power_(lib.ones(2, 3)),
                     "the base given to float_power_ has dtype Float but the operation's result requires dtype "
                     "Double"),
    "float_power_ of float64": (lambda lib: lib.ones(1, 3, dtype=lib.float64).float_power_(lib.ones(2, 3)),
                                "output with shape [1, 3] doesn't match the broadcast shape [2, 3]"),
}


@pytest.mark.parametrize("name", list(IN_PLACE_PRODUCTS))
def test_in_place_writes_name_pytorchs_error(name):
    program, message = IN_PLACE_PRODUCTS[name]
    assert _error(lambda: program(tm)) == ("RuntimeError", message)
    if name.startswith("addmv_"):  # the meta device says the same
        with tm.device("meta"):
            assert _error(lambda: program(tm)) == ("RuntimeError", message)


@pytest.mark.torch
@pytest.mark.parametrize("name", list(IN_PLACE_PRODUCTS))
def test_in_place_writes_name_the_same_error_as_pytorch(name):
    torch = pytest.importorskip("torch")
    program = IN_PLACE_PRODUCTS[name][0]
    assert _error(lambda: program(tm)) == _error(lambda: program(torch))


def test_a_right_sized_self_still_works_in_place():
    x = tm.ones(3)
    assert x.addmv_(tm.ones(3, 2), tm.ones(2)) is x and x.tolist() == [3.0, 3.0, 3.0]
