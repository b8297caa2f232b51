"""Sample tensors shared by the op declarations of several families (``TensorSpec``: a random
tensor of a shape, dtype and value range, see ``_registry``)."""

from .registry import TensorSpec

BF16 = TensorSpec((3,), "bfloat16")
BOOL = TensorSpec((2, 3), "bool")
C64 = TensorSpec((3,), "complex64", -1.0, 1.0)
COLUMN = TensorSpec((2, 1))
F16 = TensorSpec((3,), "float16")
F64 = TensorSpec((2, 3), "float64")
I23 = TensorSpec((2, 3), "int64", -5, 5)
I32 = TensorSpec((3,), "int32", -5, 5)
M23 = TensorSpec((2, 3))
M234 = TensorSpec((2, 3, 4))
POSITIVE = TensorSpec((2, 3), "float32", 0.1, 4.0)
POSITIVE_I = TensorSpec((2, 3), "int64", 1, 9)
ROW = TensorSpec((3,))
SCALAR = TensorSpec(())
SCALAR_F64 = TensorSpec((), "float64")
U8 = TensorSpec((2, 3), "uint8", 0, 9)
UNIT = TensorSpec((2, 3), "float32", -0.9, 0.9)
UNIT_INTEGERS = TensorSpec((3,), "int64", -1, 1)
UNIT_SCALAR = TensorSpec((), "float64", -0.9, 0.9)
