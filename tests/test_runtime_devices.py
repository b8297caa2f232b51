"""Device and runtime boilerplate (issue 26 item 1): tm.cuda, tm.mps, tm.accelerator, tm.cpu,
tm.backends, Tensor.cuda() and the device properties, threads, determinism, matmul precision,
memory formats, legacy tensor types, compile and jit; exact values here, PyTorch as oracle."""

from __future__ import annotations

import copy
import pickle
import warnings

import pytest

import tensormodes as tm
from tests.torch_oracle import assert_same_outcome

NOT_COMPILED = "Torch not compiled with CUDA enabled"
NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def test_cuda_answers_as_a_build_without_cuda():
    assert tm.cuda.is_available() is False
    assert tm.cuda.device_count() == 0
    assert tm.cuda.is_initialized() is False
    assert tm.cuda.manual_seed(1) is None and tm.cuda.manual_seed_all(1) is None
    assert tm.cuda.seed() is None and tm.cuda.seed_all() is None
    assert tm.cuda.is_bf16_supported() is False and tm.cuda.is_bf16_supported(including_emulation=False) is False
    assert tm.cuda.empty_cache() is None
    assert tm.cuda.get_rng_state_all() == []
    assert (tm.cuda.memory_allocated(), tm.cuda.max_memory_allocated(), tm.cuda.memory_reserved()) == (0, 0, 0)
    with pytest.raises(ValueError, match="invalid literal for int"):
        tm.cuda.manual_seed("a")
    for call in (tm.cuda.synchronize, tm.cuda.current_device, tm.cuda.get_device_name, tm.cuda.initial_seed,
                 tm.cuda.get_device_capability, lambda: tm.cuda.get_device_properties(0), tm.cuda.init):
        with pytest.raises(AssertionError, match=f"^{NOT_COMPILED}$"):
            call()
    with tm.cuda.device(None):
        pass
    with pytest.raises(RuntimeError, match="^PyTorch was compiled without CUDA support$"), tm.cuda.device(0):
        pass


def test_mps_accelerator_and_cpu_modules():
    assert (tm.mps.is_available(), tm.mps.device_count(), tm.mps.manual_seed(0)) == (False, 0, None)
    with pytest.raises(RuntimeError, match=r"^Cannot execute emptyCache\(\) without MPS backend\.$"):
        tm.mps.empty_cache()
    assert (tm.accelerator.is_available(), tm.accelerator.device_count(), tm.accelerator.current_accelerator()) \
        == (False, 0, None)
    for call in (tm.accelerator.synchronize, tm.accelerator.current_device_index, tm.accelerator.empty_cache,
                 tm.accelerator.memory_allocated):
        with pytest.raises(RuntimeError, match=f"^{NO_ACCELERATOR}$"):
            call()
    assert (tm.cpu.is_available(), tm.cpu.device_count(), tm.cpu.current_device(), tm.cpu.synchronize()) \
        == (True, 1, "cpu", None)


def test_backends_flags_have_pytorch_defaults_and_validation():
    cudnn = tm.backends.cudnn
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, False, True)
    assert cudnn.is_available() is False and cudnn.version() is None
    cudnn.benchmark = True
    try:
        assert cudnn.benchmark is True
        with cudnn.flags(enabled=False, deterministic=True):
            assert (cudnn.enabled, cudnn.deterministic, cudnn.benchmark) == (False, True, False)
        assert (cudnn.enabled, cudnn.deterministic, cudnn.benchmark) == (True, False, True)
    finally:
        cudnn.benchmark = False
    with pytest.raises(RuntimeError, match="^set_benchmark_cudnn expects a bool, but got int$"):
        cudnn.benchmark = 1
    with pytest.raises(RuntimeError, match="^set_deterministic_cudnn expects a bool, but got str$"):
        cudnn.deterministic = "x"
    assert cudnn.benchmark is False
    assert tm.backends.mps.is_available() is False and tm.backends.mps.is_built() is False
    matmul = tm.backends.cuda.matmul
    assert matmul.allow_tf32 is False and matmul.allow_fp16_reduced_precision_reduction is True
    with pytest.raises(AttributeError, match="^Unknown attribute foo$"):
        matmul.foo  # noqa: B018
    with pytest.raises(AttributeError, match="^Unknown attribute foo$"):
        matmul.foo = 1
    with pytest.raises(RuntimeError, match="^set_allow_tf32_cublas expects a bool, but got int$"):
        matmul.allow_tf32 = 1


def test_allow_tf32_follows_float32_matmul_precision():
    try:
        tm.set_float32_matmul_precision("medium")
        assert tm.backends.cuda.matmul.allow_tf32 is True
        tm.backends.cuda.matmul.allow_tf32 = False
        assert tm.get_float32_matmul_precision() == "highest"
        tm.backends.cuda.matmul.allow_tf32 = True
        assert tm.get_float32_matmul_precision() == "high"
    finally:
        tm.set_float32_matmul_precision("highest")


def test_float32_matmul_precision_validation():
    assert tm.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError, match="^set_float32_matmul_precision expects a str, but got int$"):
        tm.set_float32_matmul_precision(1)
    with pytest.warns(UserWarning, match="^low is not one of 'highest', 'high', or 'medium'; the current"
                                         "setFloat32MatmulPrecision call has no effect.$"):
        tm.set_float32_matmul_precision("low")
    assert tm.get_float32_matmul_precision() == "highest"


def test_tensor_device_properties_and_cuda():
    x = tm.zeros(1)
    meta = tm.zeros(1, device="meta")
    for t in (x, meta):
        assert (t.is_cuda, t.is_mps, t.is_xpu, t.is_sparse, t.is_sparse_csr, t.is_quantized, t.is_nested) == \
            (False,) * 7
        assert t.get_device() == -1 and t.is_pinned() is False
        assert t.layout is tm.strided and repr(t.layout) == "tensormodes.strided"
    with pytest.raises(AssertionError, match=f"^{NOT_COMPILED}$"):
        x.cuda()
    with pytest.raises(AssertionError, match=f"^{NOT_COMPILED}$"):
        x.cuda("cuda:0")
    with pytest.raises(RuntimeError, match=f"^{NO_ACCELERATOR}$"):
        x.cuda(0)
    with pytest.raises(RuntimeError, match="^Device index must not be negative$"):
        x.cuda(-1)
    with pytest.raises(RuntimeError, match="^Invalid device, must be cuda device$"):
        x.cuda("cpu")
    with pytest.raises(RuntimeError, match=f"^{NO_ACCELERATOR}$"):
        x.pin_memory()


def test_device_properties_are_overridable():
    from tensormodes.overrides import TorchFunctionMode, resolve_name

    class Cuda(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if resolve_name(func) == "tensormodes.Tensor.is_cuda.__get__":
                return True
            return func(*args, **(kwargs or {}))

    with Cuda():
        assert tm.zeros(1).is_cuda is True
    assert tm.zeros(1).is_cuda is False


def test_threads_are_validated_and_recorded():
    before = tm.get_num_threads()
    try:
        tm.set_num_threads(1)
        assert tm.get_num_threads() == 1
    finally:
        tm.set_num_threads(before)
    assert tm.get_num_interop_threads() >= 1
    for bad, error, message in ((0, RuntimeError, "set_num_threads expects a positive integer"),
                                (1.5, RuntimeError, "set_num_threads expects an int, but got float"),
                                (True, RuntimeError, "set_num_threads expects an int, but got bool"),
                                (2 ** 40, ValueError, "Overflow when unpacking long")):
        with pytest.raises(error, match=f"^{message}$"):
            tm.set_num_threads(bad)
    with pytest.raises(RuntimeError, match="^set_num_interop_threads expects a positive integer$"):
        tm.set_num_interop_threads(-1)


def test_deterministic_algorithms_flags():
    assert tm.are_deterministic_algorithms_enabled() is False
    try:
        tm.use_deterministic_algorithms(True, warn_only=True)
        assert (tm.are_deterministic_algorithms_enabled(), tm.is_deterministic_algorithms_warn_only_enabled(),
                tm.get_deterministic_debug_mode()) == (True, True, 1)
        tm.set_deterministic_debug_mode("error")
        assert (tm.is_deterministic_algorithms_warn_only_enabled(), tm.get_deterministic_debug_mode()) == (False, 2)
    finally:
        tm.use_deterministic_algorithms(False)
    with pytest.raises(TypeError, match=r"^_set_deterministic_algorithms\(\): argument 'mode' \(position 1\) "
                                        "must be bool, not int$"):
        tm.use_deterministic_algorithms(1)
    with pytest.raises(RuntimeError, match="^invalid value of debug_mode, expected 0, 1, or 2, but got 3$"):
        tm.set_deterministic_debug_mode(3)
    assert tm.get_deterministic_debug_mode() == 0


def test_memory_formats():
    assert [repr(f) for f in (tm.contiguous_format, tm.channels_last, tm.preserve_format)] == \
        ["tensormodes.contiguous_format", "tensormodes.channels_last", "tensormodes.preserve_format"]
    assert type(tm.channels_last) is tm.memory_format
    assert pickle.loads(pickle.dumps(tm.channels_last)) is tm.channels_last
    assert copy.deepcopy(tm.channels_last) is tm.channels_last
    with pytest.raises(TypeError, match="^cannot create 'tensormodes.memory_format' instances$"):
        tm.memory_format()
    x = tm.zeros(2, 3, 4, 5)
    nhwc = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    assert nhwc.stride() == (60, 1, 15, 3)
    assert (x.is_contiguous(), x.is_contiguous(memory_format=tm.channels_last)) == (True, False)
    assert (nhwc.is_contiguous(), nhwc.is_contiguous(memory_format=tm.channels_last)) == (False, True)
    assert tm.zeros(2, 3, 4).is_contiguous(memory_format=tm.channels_last) is False
    assert tm.zeros(2, 3, 1, 1).is_contiguous(memory_format=tm.channels_last) is True
    with pytest.raises(TypeError, match="^is_contiguous\\(\\): argument 'memory_format' must be "
                                        "tensormodes.memory_format, not int$"):
        x.is_contiguous(memory_format=1)
    # accepted where PyTorch accepts it (the copies stay row-major here)
    assert x.contiguous(memory_format=tm.channels_last).shape == x.shape
    assert tm.empty_like(x, memory_format=tm.channels_last).shape == x.shape
    assert x.to(memory_format=tm.channels_last).shape == x.shape
    assert tm.nn.Conv2d(1, 1, 1).to(memory_format=tm.channels_last).weight.shape == (1, 1, 1, 1)


def test_legacy_tensor_types():
    assert tm.FloatTensor([1, 2]).tolist() == [1.0, 2.0] and tm.FloatTensor([1, 2]).dtype is tm.float32
    assert tm.FloatTensor(2, 3).shape == (2, 3) and tm.FloatTensor().shape == (0,)
    assert tm.FloatTensor((2, 3)).tolist() == [2.0, 3.0] and tm.FloatTensor(tm.Size([2, 3])).shape == (2, 3)
    assert tm.LongTensor([1.5, 2]).tolist() == [1, 2]
    assert [tm.DoubleTensor([1]).dtype, tm.IntTensor([1]).dtype, tm.BoolTensor([1]).dtype, tm.ByteTensor([1]).dtype,
            tm.HalfTensor([1]).dtype, tm.BFloat16Tensor([1]).dtype, tm.CharTensor([1]).dtype,
            tm.ShortTensor([1]).dtype] == [tm.float64, tm.int32, tm.bool, tm.uint8, tm.float16, tm.bfloat16,
                                           tm.int8, tm.int16]
    assert isinstance(tm.ones(1), tm.FloatTensor) and isinstance(tm.nn.Parameter(tm.ones(1)), tm.FloatTensor)
    assert not isinstance(tm.ones(1), tm.DoubleTensor) and not isinstance(tm.ones(1, device="meta"), tm.FloatTensor)
    assert isinstance(tm.ones(1).long(), tm.LongTensor)
    assert not issubclass(tm.Tensor, tm.FloatTensor) and not issubclass(tm.FloatTensor, tm.Tensor)
    assert repr(tm.FloatTensor) == "<class 'tensormodes.FloatTensor'>"
    assert repr(type(tm.FloatTensor)) == "<class 'tensormodes.tensortype'>"
    assert tm.FloatTensor.dtype is tm.float32 and tm.FloatTensor.is_cuda is False
    assert tm.ones(1).type(tm.DoubleTensor).dtype is tm.float64
    t = tm.ones(2, requires_grad=True)
    alias = tm.FloatTensor(t)
    assert alias is not t and alias.requires_grad and alias._data.base is not None
    with pytest.raises(TypeError, match=r"^new\(\): data must be a sequence \(got float\)$"):
        tm.FloatTensor(2.5)
    with pytest.raises(TypeError, match=r"^new\(\): invalid data type 'str'$"):
        tm.FloatTensor("a")
    with pytest.raises(RuntimeError, match="^legacy constructor expects device type: cpu but device type: meta "
                                           "was passed$"):
        tm.FloatTensor(2, device="meta")
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: \[-1\]$"):
        tm.FloatTensor(-1)
    with pytest.raises(TypeError, match=r"^expected TensorOptions\(dtype=float, device=cpu"):
        tm.FloatTensor(tm.tensor([1, 2]))


def test_compile_and_jit():
    layer = tm.nn.Linear(2, 2)
    assert tm.compile(layer) is layer
    assert tm.compile(mode="max-autotune")(layer) is layer
    with pytest.raises(AssertionError, match="^A callable function is expected, but <class 'int'> is provided.$"):
        tm.compile(1)
    for call in (tm.jit.script, tm.jit.trace):
        with pytest.raises(NotImplementedError, match=r"tensormodes\.fx\.symbolic_trace"):
            call(layer)
    assert tm.jit.is_scripting() is False and tm.jit.is_tracing() is False


TORCH_EXPRESSIONS = [
    "L.cuda.is_available()", "L.cuda.device_count()", "L.cuda.manual_seed(1)", "L.cuda.manual_seed_all(1)",
    "L.cuda.is_bf16_supported()", "L.cuda.synchronize()", "L.cuda.empty_cache()", "L.cuda.current_device()",
    "L.cuda.get_device_name()", "L.cuda.get_device_name(0)", "L.cuda.initial_seed()", "L.cuda.memory_allocated()",
    "L.cuda.get_rng_state_all()", "L.cuda.is_initialized()",
    "L.mps.is_available()", "L.mps.device_count()", "L.mps.synchronize()", "L.mps.empty_cache()",
    "L.accelerator.is_available()", "L.accelerator.device_count()", "L.accelerator.current_accelerator()",
    "L.accelerator.synchronize()", "L.accelerator.current_device_index()",
    "L.backends.cudnn.enabled", "L.backends.cudnn.benchmark", "L.backends.cudnn.deterministic",
    "L.backends.cudnn.allow_tf32", "L.backends.cudnn.is_available()", "L.backends.mps.is_available()",
    "L.backends.cuda.matmul.allow_tf32", "L.backends.cuda.matmul.foo",
    "L.zeros(1).cuda()", "L.zeros(1).cuda(0)", "L.zeros(1).cuda(-1)", "L.zeros(1).cuda('cpu')",
    "L.zeros(1).cuda('cuda:0')", "L.zeros(1).is_cuda", "L.zeros(1).is_sparse", "L.zeros(1).is_mps",
    "L.zeros(1).get_device()", "L.zeros(1).is_pinned()", "L.zeros(1).pin_memory()",
    "L.get_float32_matmul_precision()", "L.set_float32_matmul_precision(1)", "L.set_num_threads(0)",
    "L.set_num_threads(1.5)", "L.set_num_interop_threads(0)", "L.are_deterministic_algorithms_enabled()",
    "L.use_deterministic_algorithms(1)", "L.set_deterministic_debug_mode('bad')",
    "L.contiguous_format", "L.channels_last", "L.preserve_format", "L.channels_last_3d", "L.memory_format()",
    "L.zeros(2, 3, 4, 5).is_contiguous(memory_format=L.channels_last)",
    "L.zeros(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)"
    ".is_contiguous(memory_format=L.channels_last)",
    "L.zeros(2, 3, 4, 5).is_contiguous(memory_format=1)",
    "L.FloatTensor([1, 2])", "L.FloatTensor(2, 3).shape", "L.FloatTensor()", "L.FloatTensor((2, 3))",
    "L.LongTensor([1.5, 2])", "L.BoolTensor([1, 0])", "L.ByteTensor([1, 0])", "L.HalfTensor([1])",
    "L.BFloat16Tensor([1])", "L.IntTensor([3])", "L.DoubleTensor([1])", "L.CharTensor([1])", "L.ShortTensor([1])",
    "L.FloatTensor(2.5)", "L.FloatTensor('a')", "L.FloatTensor(-1)", "L.FloatTensor(2, device='meta')",
    "L.FloatTensor(L.tensor([1, 2]))", "L.FloatTensor(2, [1])",
    "isinstance(L.ones(1), L.FloatTensor)", "isinstance(L.ones(1), L.DoubleTensor)",
    "isinstance(L.ones(1, device='meta'), L.FloatTensor)", "isinstance(L.nn.Parameter(L.ones(1)), L.FloatTensor)",
    "L.FloatTensor", "type(L.FloatTensor)", "L.ones(1).type(L.DoubleTensor).dtype",
    "L.compile(1)", "L.cpu.is_available()", "L.cpu.device_count()", "L.cpu.current_device()",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", TORCH_EXPRESSIONS)
def test_same_as_torch(expression):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_outcome(expression)


def test_layout_is_a_property_a_function_mode_sees():
    # PyTorch's ``Tensor.layout`` is a getset descriptor that modes see as its ``__get__``.
    seen = []

    class Watch(tm.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", None))
            return func(*args, **(kwargs or {}))

    x = tm.zeros(2)
    with Watch():
        assert x.layout is tm.strided
    assert seen == ["__get__"]
    assert tm.nn.Parameter(tm.zeros(2)).layout is tm.strided
