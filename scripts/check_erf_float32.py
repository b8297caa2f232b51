"""Check that the float32 error function's fast path rounds as the whole series on every float32.

``_erf_rounded`` (``src/tensormodes/_ops/special.py``) decides most float32 values of ``erf`` from
the leading terms of its series and leaves the elements near a rounding midpoint to the whole
series. This script compares it, bit for bit, with ``_erf(x).astype(float32)`` on every float32
from 0 to a little past 6 (where erf becomes 1), about 1.1 billion values, in chunks, and those
from 2 on again through the path that few such elements take; negative inputs are the same
magnitudes with the sign copied. Run ``PYTHONPATH=src python
scripts/check_erf_float32.py`` (a few minutes); it exits non-zero on any difference.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from tensormodes._ops import special
from tensormodes._ops.special import _erf, _erf_rounded


def compare(first: int, last: int) -> int:
    """Differences between the two on the float32 bit patterns [first, last), printed."""
    mismatches = 0
    for start in range(first, last, 1 << 22):
        x = np.arange(start, min(start + (1 << 22), last), dtype=np.uint32).view(np.float32)
        different = _erf(x).astype(np.float32).view(np.uint32) != _erf_rounded(x).view(np.uint32)
        if different.any():
            mismatches += int(different.sum())
            print("differs at", x[different][:5], flush=True)
    return mismatches


def main() -> int:
    two, last = (int(np.array(v, np.float32).view(np.uint32)) for v in (2.0, 6.0))
    last += 4096
    started = time.perf_counter()
    mismatches = compare(0, last)  # chunks of 4M values: the tail's series beyond 2
    special._FEW_BEYOND = 1 << 62  # and the standard library's erf, which few elements beyond 2 take
    mismatches += compare(two, last)
    print(f"{last:,} float32 values, {mismatches} differences, {time.perf_counter() - started:.0f} s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
