"""Triangular solves, LU and Cholesky factors and what is solved with them, and PyTorch's older
linear-algebra names: ``linalg.solve_triangular``, ``lu_factor(_ex)``, ``lu``, ``lu_solve``,
``solve_ex``, ``inv_ex``, ``cholesky_ex``, ``vecdot``, ``matmul``, ``diagonal``, ``vander``,
``tensorinv``, ``tensorsolve``; ``triangular_solve``, ``lu``, ``lu_solve``, ``lu_unpack``,
``cholesky``, ``cholesky_solve``, ``cholesky_inverse``, ``qr``, ``addr``, ``dist``, ``renorm``,
``chain_matmul``, ``adjoint``, ``nuclear_norm``, ``frobenius_norm`` and the removed stubs —
values, dtypes, pivots, PyTorch's errors and gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensormodes as tm

from .torch_oracle import assert_same_outcome

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

A3 = "L.tensor([[4., 1., 2.], [1., 3., 0.], [2., 0., 5.]], dtype=L.float64)"
B32 = "L.arange(6., dtype=L.float64).reshape(3, 2)"
SPD = "L.tensor([[4., 2., 0.4], [2., 5., 1.], [0.4, 1., 3.]])"
RANDOM = "L.tensor(np.random.default_rng({seed}).standard_normal({shape}))"

CASES = [
    # solve_triangular: sides, triangles, unit diagonals, batches broadcast, A's dtype, errors
    f"L.linalg.solve_triangular({A3}, {B32}, upper=True)", f"L.linalg.solve_triangular({A3}, {B32}, upper=False)",
    f"L.linalg.solve_triangular({A3}, {B32}.mT, upper=True, left=False)",
    f"L.linalg.solve_triangular({A3}, {B32}, upper=False, unitriangular=True)",
    f"L.linalg.solve_triangular({A3}.expand(2, 1, 3, 3), {B32}.expand(4, 3, 2), upper=True)",
    f"L.linalg.solve_triangular({A3}.to(L.complex128) * (1 + 1j), {B32}.to(L.complex128), upper=True)",
    f"L.linalg.solve_triangular({A3}, {B32}.float(), upper=True)",
    "L.linalg.solve_triangular(L.zeros(2, 2), L.ones(2, 1), upper=True)",
    "L.linalg.solve_triangular(L.tensor([[0., 1.], [0., 1.]]), L.ones(2, 1), upper=True)",
    "L.linalg.solve_triangular(L.ones(0, 0), L.ones(0, 2), upper=True)",
    "L.linalg.solve_triangular(L.eye(3), L.ones(3), upper=True)",
    "L.linalg.solve_triangular(L.ones(3), L.ones(3, 1), upper=True)",
    "L.linalg.solve_triangular(L.ones(2, 3), L.ones(2, 2), upper=True)",
    "L.linalg.solve_triangular(L.eye(3), L.ones(2, 2), upper=True)",
    "L.linalg.solve_triangular(L.eye(3), L.ones(3, 2), upper=True, left=False)",
    "L.linalg.solve_triangular(L.eye(2, dtype=L.int64), L.ones(2, 2, dtype=L.int64), upper=True)",
    "L.linalg.solve_triangular(L.eye(2, dtype=L.float16), L.ones(2, 2, dtype=L.float16), upper=True)",
    # LU factorisation: LAPACK's pivots (int32, exact), rectangular, batched, complex, singular, empty
    f"L.linalg.lu_factor({A3})", f"L.linalg.lu_factor_ex({A3})", "L.linalg.lu_factor(L.arange(6.).reshape(2, 3))",
    "L.linalg.lu_factor(L.arange(6.).reshape(3, 2) ** 2)",
    f"L.linalg.lu_factor({RANDOM.format(seed=0, shape=(3, 4, 4))})",
    "L.linalg.lu_factor(L.tensor([[1 + 1j, 2], [3j, 1]]))", "L.linalg.lu_factor_ex(L.zeros(2, 2))",
    "L.linalg.lu_factor_ex(L.tensor([[1., 2], [2, 4]]))", "L.linalg.lu_factor_ex(L.tensor([[0., 2, 1], [0, 4, 1]]))",
    "L.linalg.lu_factor(L.zeros(2, 2))", "L.linalg.lu_factor(L.stack([L.eye(2), L.zeros(2, 2)]))",
    "L.linalg.lu_factor_ex(L.zeros(2, 2), check_errors=True)", "L.linalg.lu_factor(L.ones(2, 0, 3))",
    "L.linalg.lu_factor(L.ones(3))",
    "L.linalg.lu_factor(L.eye(2, dtype=L.int64))", "L.linalg.lu_factor(L.eye(2), pivot=False)",
    "L.linalg.lu_factor(L.eye(2, dtype=L.float16))",
    f"L.linalg.lu({A3})", "L.linalg.lu(L.arange(6.).reshape(2, 3))", "L.linalg.lu(L.arange(6.).reshape(3, 2) ** 2)",
    "L.linalg.lu(L.zeros(2, 2))", "L.linalg.lu(L.ones(3))", f"L.linalg.lu({RANDOM.format(seed=1, shape=(2, 3, 3))})",
    # lu_unpack
    f"L.lu_unpack(*L.linalg.lu_factor({RANDOM.format(seed=2, shape=(2, 4, 4))}))",
    "L.lu_unpack(*L.linalg.lu_factor(L.arange(6.).reshape(2, 3)))",
    "L.lu_unpack(L.eye(3), L.tensor([3, 3, 3], dtype=L.int32), unpack_data=False)",
    "L.lu_unpack(L.eye(3), L.tensor([3, 3, 3], dtype=L.int32), unpack_pivots=False)",
    "L.lu_unpack(L.eye(3, dtype=L.int64), L.tensor([3, 3, 3], dtype=L.int32))",
    "L.lu_unpack(L.eye(3), L.ones(3))", "L.lu_unpack(L.eye(3), L.tensor([5, 1, 1], dtype=L.int32))",
    "L.lu_unpack(L.eye(3), L.tensor([0, 1, 1], dtype=L.int32))", "L.lu_unpack(L.ones(3), L.ones(3, dtype=L.int32))",
    "L.lu_unpack(L.zeros(3, 0), L.tensor([1, 1], dtype=L.int32))",
    "L.lu_unpack(L.eye(3)[:, :2], L.tensor([2, 3, 3], dtype=L.int32))",
    "L.lu_unpack(L.eye(3)[:, :2], L.tensor([2], dtype=L.int32))",
    "L.lu_solve(L.ones(3, 2), L.eye(3), L.tensor(1, dtype=L.int32))",
    # lu_solve: sides, adjoint, batches, errors
    f"L.linalg.lu_solve(*L.linalg.lu_factor({A3}), {B32})",
    f"L.linalg.lu_solve(*L.linalg.lu_factor({A3}), {B32}, adjoint=True)",
    f"L.linalg.lu_solve(*L.linalg.lu_factor({A3}), {B32}.mT, left=False)",
    f"L.linalg.lu_solve(*L.linalg.lu_factor({A3}), {B32}.mT, left=False, adjoint=True)",
    f"L.linalg.lu_solve(*L.linalg.lu_factor({A3}.expand(2, 3, 3)), {B32})",
    "L.linalg.lu_solve(L.eye(3), L.ones(3, dtype=L.int64), L.ones(3, 2))",
    "L.linalg.lu_solve(L.eye(3), L.ones(2, dtype=L.int32), L.ones(3, 2))",
    "L.linalg.lu_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(3, 2, dtype=L.float64))",
    "L.linalg.lu_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(3))",
    "L.linalg.lu_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(2, 2))",
    "L.linalg.lu_solve(L.ones(2, 3), L.ones(2, dtype=L.int32), L.ones(2, 2))",
    "L.linalg.lu_solve(L.eye(3), L.tensor([5, 1, 1], dtype=L.int32), L.ones(3, 2))",
    "L.linalg.lu_solve(L.eye(3, dtype=L.int64), L.ones(3, dtype=L.int32), L.ones(3, 2, dtype=L.int64))",
    # solve_ex and inv_ex: info, and LAPACK's infinities for singular matrices
    f"L.linalg.solve_ex({A3}, {B32})", f"L.linalg.solve_ex({A3}, {B32}.mT, left=False)",
    "L.linalg.solve_ex(L.zeros(2, 2), L.ones(2))", "L.linalg.solve_ex(L.zeros(2, 2), L.ones(2), check_errors=True)",
    f"L.linalg.inv_ex({A3})", "L.linalg.inv_ex(L.zeros(2, 2))", "L.linalg.inv_ex(L.zeros(2, 2), check_errors=True)",
    "L.linalg.inv_ex(L.ones(0, 2, 2))", "L.linalg.inv_ex(L.ones(2, 3))",
    # Cholesky: cholesky_ex's partial factors, the older cholesky, cholesky_solve, cholesky_inverse
    f"L.linalg.cholesky_ex({SPD})", f"L.linalg.cholesky_ex({SPD}, upper=True)", "L.linalg.cholesky_ex(-L.eye(2))",
    "L.linalg.cholesky_ex(L.tensor([[1., 2, 3], [2, 1, 5], [3, 5, 9]]))",
    "L.linalg.cholesky_ex(L.tensor([[1., 2, 3], [2, 1, 5], [3, 5, 9]]), upper=True)",
    "L.linalg.cholesky_ex(-L.eye(2), check_errors=True)", "L.linalg.cholesky_ex(L.ones(0, 3, 3))",
    f"L.cholesky({SPD})", f"L.cholesky({SPD}, upper=True)", f"L.tensor({SPD}.tolist()).cholesky()",
    "L.cholesky(-L.eye(2))", "L.cholesky(L.ones(2, 3))",
    f"L.cholesky_solve(L.ones(3, 2), L.linalg.cholesky({SPD}))",
    f"L.cholesky_solve(L.ones(2, 3, 1), L.linalg.cholesky({SPD}, upper=True), upper=True)",
    "L.cholesky_solve(L.ones(3, 2), L.ones(2, 2))", "L.cholesky_solve(L.ones(3), L.eye(3))",
    "L.cholesky_solve(L.ones(3, 2), L.eye(3, dtype=L.float64))",
    "L.cholesky_solve(L.ones(3, 2, dtype=L.int64), L.eye(3, dtype=L.int64))",
    f"L.cholesky_inverse(L.linalg.cholesky({SPD}))", f"L.cholesky_inverse(L.linalg.cholesky({SPD}, upper=True), True)",
    "L.cholesky_inverse(L.ones(3))", "L.cholesky_inverse(L.ones(2, 3))", "L.cholesky_inverse(L.eye(2, dtype=L.int64))",
    # the older triangular_solve, lu, lu_solve and qr
    f"L.triangular_solve({B32}, {A3})", f"L.triangular_solve({B32}, {A3}, upper=False, transpose=True)",
    f"L.triangular_solve({B32}, {A3}.expand(2, 3, 3), unitriangular=True)",
    f"L.lu({A3})", f"L.lu({A3}, get_infos=True)", "L.lu(L.zeros(2, 2))", f"{A3}.lu()",
    f"L.lu_solve({B32}, *L.linalg.lu_factor({A3}))", f"{B32}.lu_solve(*L.linalg.lu_factor({A3}))",
    "L.qr(L.arange(6.).reshape(3, 2))",
    "L.qr(L.arange(6.).reshape(3, 2), some=False)", "L.arange(6.).reshape(3, 2).qr()",
    # addr, dist, renorm
    "L.addr(L.ones(2, 3), L.tensor([1., 2.]), L.tensor([1., 2., 3.]), beta=0.5, alpha=2)",
    "L.addr(L.ones(3), L.ones(2), L.ones(3))", "L.addr(L.ones(2, 3), L.ones(2, dtype=L.float64), L.ones(3))",
    "L.addr(L.ones(2, 3, dtype=L.int64), L.ones(2), L.ones(3))",
    "L.addr(L.ones(2, 3, dtype=L.int64), L.ones(2, dtype=L.int64), L.ones(3, dtype=L.int64), beta=2, alpha=3)",
    "L.addr(L.ones(2, 3, dtype=L.int64), L.ones(2, dtype=L.int64), L.ones(3, dtype=L.int64), alpha=1.5)",
    "L.addr(L.zeros(2, 3, dtype=L.bool), L.tensor([True, False]), L.tensor([True, False, True]))",
    "L.addr(L.ones(2, 3, dtype=L.bool), L.tensor([True, False]), L.tensor([True, False, True]), alpha=0, beta=0)",
    "L.addr(L.full((2, 3), nan), L.ones(2), L.ones(3), beta=0)",
    "L.addr(L.ones(2, 3, dtype=L.float16), L.ones(2, dtype=L.float16) * 0.1, L.ones(3, dtype=L.float16) * 0.3, "
    "alpha=0.7)",
    "L.addr(L.ones(2, 2, dtype=L.complex64), L.tensor([1j, 2]), L.tensor([1, 1j]), alpha=1j)",
    "L.addr(L.ones(2, 3), L.ones(2, 1), L.ones(3))", "L.addr(L.ones(3, 3), L.ones(2), L.ones(3))",
    "L.ones(2, 3).addr_(L.ones(2), L.ones(3), alpha=2)",
    "L.dist(L.tensor([1., 2, 3]), L.tensor([1., 0, 0]))", "L.dist(L.tensor([1., 2, 3]), L.tensor([1., 0, 0]), 0)",
    "L.dist(L.tensor([1., 2, 3]), L.tensor([1., 0, 0]), inf)", "L.dist(L.ones(2, 3), L.zeros(3), 3)",
    "L.dist(L.tensor([1., 2, 3]).half(), L.tensor([1., 0, 0]).half())", "L.dist(L.tensor([1j, 2]), L.tensor([1., 0]))",
    "L.dist(L.ones(2), L.ones(3))", "L.dist(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64))",
    "L.dist(L.ones(2, dtype=L.int64), L.ones(2))",
    "L.renorm(L.arange(6.).reshape(2, 3), 2, 0, 1.)", "L.renorm(L.arange(6.).reshape(2, 3), 1, 1, 2.)",
    "L.renorm(L.arange(6.).reshape(2, 3), inf, 0, 1.)", "L.renorm(L.ones(2, 3).half() * 3, 2, 1, 1.)",
    "L.renorm(L.ones(2, 3) * (1 + 1j), 2, 0, 1.)", "L.arange(6.).reshape(2, 3).renorm_(2, 0, 1.)",
    "L.renorm(L.ones(2, 3), 2, 5, 1.)", "L.renorm(L.ones(2, 3), 2, 0, -1.)", "L.renorm(L.ones(2, 3), 0, 0, 1.)",
    "L.renorm(L.arange(6.), 2, 0, 1.)", "L.ones(2, 3, dtype=L.int64).renorm_(2, 0, 1.)",
    # composites: vecdot, linalg.matmul, linalg.diagonal, vander, tensorinv, tensorsolve
    "L.linalg.vecdot(L.arange(6.).reshape(2, 3), L.arange(3.))",
    "L.linalg.vecdot(L.tensor([1j, 2]), L.tensor([1j, 1]))",
    "L.linalg.vecdot(L.ones(2, 3, dtype=L.complex64) * (1 + 2j), L.ones(2, 3, dtype=L.complex64), dim=0)",
    "L.linalg.vecdot(L.ones(2), L.ones(2, dtype=L.float64))",
    "L.linalg.vecdot(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64))",
    "L.linalg.matmul(L.ones(2, 3), L.ones(3))", "L.linalg.diagonal(L.arange(8.).reshape(2, 2, 2), offset=1)",
    "L.linalg.vander(L.tensor([1., 2, 3]))", "L.linalg.vander(L.arange(6).reshape(2, 3), N=4)",
    "L.linalg.vander(L.tensor(2.))", "L.linalg.vander(L.tensor([2.]))",
    "L.linalg.tensorinv(L.eye(4).reshape(4, 2, 2) * 2, ind=1)", "L.linalg.tensorinv(L.eye(4).reshape(2, 2, 2, 2))",
    "L.linalg.tensorinv(L.ones(4, 2, 2), ind=1)", "L.linalg.tensorinv(L.ones(4, 2, 3), ind=1)",
    "L.linalg.tensorinv(L.ones(4, 2, 2), ind=0)",
    "L.linalg.tensorsolve((L.eye(6) * 2 + 0.5).reshape(2, 3, 6), L.arange(6.).reshape(2, 3))",
    "L.linalg.tensorsolve((L.eye(6) * 2 + 0.5).reshape(6, 2, 3), L.arange(6.).reshape(2, 3), dims=(0,))",
    "L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(2, 3))", "L.linalg.tensorsolve(L.ones(2, 3, 5), L.ones(2, 3))",
    # adjoint, chain_matmul, nuclear_norm, frobenius_norm, Tensor.kron
    "L.adjoint(L.tensor([[1j, 2.], [3., 4.]]))", "L.tensor([[1j, 2.], [3., 4.]]).adjoint()", "L.adjoint(L.ones(3))",
    "L.adjoint(L.tensor(2.))",
    "L.chain_matmul(L.ones(2, 3), L.ones(3, 4), L.ones(4, 2))", "L.chain_matmul(L.ones(2, 3))", "L.chain_matmul()",
    "L.chain_matmul(L.ones(2, 2), L.ones(2))",
    "L.nuclear_norm(L.arange(6.).reshape(2, 3))",
    "L.nuclear_norm(L.arange(12.).reshape(2, 2, 3), dim=(1, 2), keepdim=True)",
    "L.nuclear_norm(L.arange(12.).reshape(2, 2, 3))", "L.nuclear_norm(L.arange(6.).reshape(2, 3), True)",
    "L.frobenius_norm(L.arange(6.).reshape(2, 3), (0, 1))", "L.frobenius_norm(L.arange(6.).reshape(2, 3), 1, True)",
    "L.ones(2).kron(L.arange(3.))",
    # LDL: LAPACK's Bunch-Kaufman pivots (2 x 2 blocks negative), Hermitian, singular D, solves
    "L.linalg.ldl_factor_ex(L.tensor([[0., 1, 2], [1, 0, 3], [2, 3, 0]]))",
    f"L.linalg.ldl_factor({A3})", f"L.linalg.ldl_factor(({RANDOM.format(seed=6, shape=(2, 5, 5))}).round())",
    "L.linalg.ldl_factor(L.tensor([[1 + 1j, 2], [2, 1j]]))",
    "L.linalg.ldl_factor(L.tensor([[1, 2 + 1j, 0], [2 - 1j, 0, 3j], [0, -3j, 1]]), hermitian=True)",
    "L.linalg.ldl_factor_ex(L.zeros(2, 2))", "L.linalg.ldl_factor(L.zeros(2, 2))",
    "L.linalg.ldl_factor(L.ones(0, 3, 3))", "L.linalg.ldl_factor(L.ones(3))", "L.linalg.ldl_factor(L.ones(2, 3))",
    "L.linalg.ldl_factor(L.eye(2, dtype=L.int64))",
    "L.linalg.ldl_factor(L.eye(2, dtype=L.float16))",
    f"L.linalg.ldl_solve(*L.linalg.ldl_factor(L.tensor([[0., 1, 2], [1, 0, 3], [2, 3, 0]])), {B32}.float())",
    "L.linalg.ldl_solve(*L.linalg.ldl_factor(L.tensor([[1, 2 + 1j, 0], [2 - 1j, 0, 3j], [0, -3j, 1]]), "
    "hermitian=True), L.ones(2, 3, 1, dtype=L.complex64), hermitian=True)",
    "L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(3))",
    "L.linalg.ldl_solve(L.eye(3), L.ones(2, dtype=L.int32), L.ones(3, 1))",
    "L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(2, 1))",
    "L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(3, 1, dtype=L.float64))",
    "L.linalg.ldl_solve(L.eye(3), L.tensor([5, 1, 1], dtype=L.int32), L.ones(3, 1))",
    "L.linalg.ldl_solve(L.eye(3, dtype=L.int64), L.ones(3, dtype=L.int32), L.ones(3, 1, dtype=L.int64))",
    # geqrf, orgqr, ormqr
    f"L.geqrf({RANDOM.format(seed=3, shape=(2, 4, 3))})", "L.geqrf(L.tensor([[1 + 1j, 2], [3j, 1], [1, 1]]))",
    "L.geqrf(L.ones(0, 3))", "L.geqrf(L.ones(3))", "L.geqrf(L.ones(2, 2, dtype=L.int64))",
    f"L.orgqr(*L.geqrf({RANDOM.format(seed=4, shape=(4, 3))}))",
    f"{RANDOM.format(seed=4, shape=(4, 3))}.orgqr(L.ones(2, dtype=L.float64))",
    f"L.ormqr(*L.geqrf({RANDOM.format(seed=5, shape=(3, 2))}), L.eye(3, dtype=L.float64))",
    f"L.ormqr(*L.geqrf({RANDOM.format(seed=5, shape=(3, 2))}), L.ones(2, 3, dtype=L.float64), left=False)",
    f"L.ormqr(*L.geqrf({RANDOM.format(seed=5, shape=(3, 2))}), L.ones(3, 2, dtype=L.float64), transpose=True)",
    "L.ormqr(L.ones(3, 2), L.ones(2), L.ones(2, 2))", "L.ormqr(L.ones(3, 2), L.ones(3), L.ones(3, 2))",
    "L.ormqr(L.ones(3), L.ones(2), L.ones(3, 2))", "L.ormqr(L.ones(3, 2), L.ones(2, dtype=L.float64), L.ones(3, 2))",
    "L.ormqr(L.ones(3, 2), L.ones(2), L.ones(3))", "L.ormqr(L.ones(2, 3, 2), L.ones(2, 2), L.ones(3, 2))",
    "L.ormqr(L.ones(3, 2), L.ones(2), L.ones(2, 3), left=False, transpose=True)",
    # batches' error messages, non-finite inputs, tiny pivots
    "L.linalg.solve_ex(L.stack([L.eye(2), L.zeros(2, 2)]), L.ones(2, 2, 1), check_errors=True)",
    "L.linalg.inv_ex(L.stack([L.eye(2), L.zeros(2, 2)]), check_errors=True)",
    "L.linalg.cholesky_ex(L.stack([L.eye(2), -L.eye(2)]), check_errors=True)",
    "L.linalg.lu_factor_ex(L.stack([L.eye(2), L.zeros(2, 2)]), check_errors=True)",
    "L.linalg.ldl_factor(L.stack([L.eye(2), L.zeros(2, 2)]))", "L.linalg.inv_ex(L.stack([L.eye(2), L.zeros(2, 2)]))",
    "L.linalg.tensorinv(L.zeros(4, 2, 2), ind=1)", "L.linalg.tensorsolve(L.zeros(2, 2), L.ones(2))",
    "L.linalg.lu_factor_ex(L.tensor([[1., nan], [2., 3.]]))", "L.linalg.lu_factor_ex(L.tensor([[inf, 1.], [2., 3.]]))",
    "L.linalg.solve_triangular(L.tensor([[1., nan], [0., 3.]]), L.ones(2, 1), upper=True)",
    "L.linalg.lu_factor(L.tensor([[1e-30, 1.], [1., 1.]], dtype=L.float64))",
    "L.linalg.lu_factor_ex(L.tensor([[1., 2.], [nan, 3.]]))", "L.linalg.lu_factor_ex(L.tensor([[nan, 2.], [5., 3.]]))",
    "L.linalg.lu_factor_ex(L.tensor([[1., 2., 0.], [nan, 3., 1.], [4., 1., 1.]]))",
        # the differential fuzzer's findings: empty inputs before dtype checks, checks' order
    "L.linalg.lu_factor(L.ones(0, 3, dtype=L.int64))", "L.linalg.lu_factor_ex(L.ones(2, 0, dtype=L.int16))",
    "L.linalg.lu(L.ones(0, 0, dtype=L.int8))", "L.cholesky(L.ones(1, 0))", "L.cholesky(L.ones(2, 3, dtype=L.int16))",
    "L.cholesky(L.ones(2, 2, dtype=L.int16))", "L.renorm(L.ones(3), 0, 5, -1.)", "L.renorm(L.tensor(1.), 1, 1, 1.)",
    "L.dist(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool))", "L.dist(L.ones(2, dtype=L.bool), L.ones(2))",
    "L.cholesky_inverse(L.stack([L.eye(2), L.tensor([[1., 0], [1, 0]])]))",
    "L.cholesky_inverse(L.tensor([[0., 0], [1, 1]]), upper=True)",
    "L.triangular_solve(L.ones(2, 1, dtype=L.int16), L.eye(2, dtype=L.float64))",
    "L.triangular_solve(L.ones(2), L.eye(2, dtype=L.float64))",
    "L.linalg.ldl_solve(L.eye(2, dtype=L.float64), L.ones(2, dtype=L.int32), L.ones(2, dtype=L.int32))",
    "L.linalg.lu_solve(L.eye(2).expand(2, 2, 2), L.ones(2, 2, 2, dtype=L.int32), L.ones(2, 1))",
        # PyTorch's binding's parameter names (its documentation says A and B)
    "L.linalg.solve_triangular(input=L.eye(2), B=L.ones(2, 1), upper=True)",
    "L.linalg.cholesky_ex(input=L.eye(2))", "L.linalg.ldl_factor(input=L.eye(2))",
    "L.linalg.ldl_factor_ex(input=L.eye(2))", "L.linalg.tensorinv(input=L.eye(4).reshape(4, 2, 2), ind=1)",
    "L.linalg.tensorsolve(input=L.eye(3), other=L.ones(3))",
    "L.linalg.lu_solve(LU=L.eye(2), pivots=L.tensor([1, 2], dtype=L.int32), B=L.ones(2, 1))",
    "L.lu_unpack(LU_data=L.eye(2), LU_pivots=L.tensor([1, 2], dtype=L.int32))",
    "L.ormqr(input=L.eye(2), input2=L.ones(2), input3=L.eye(2))",
        # removed in PyTorch 1.9: stubs that raise
    "L.symeig(L.eye(2))", "L.eye(2).symeig()", "L.eig(L.eye(2))", "L.eye(2).eig()", "L.lstsq(L.eye(2), L.eye(2))",
    "L.eye(2).lstsq(L.eye(2))", "L.solve(L.eye(2), L.eye(2))", "L.eye(2).solve(L.eye(2))", "L.matrix_rank(L.eye(2))",
]


@pytest.mark.torch
@pytest.mark.parametrize("expression", CASES)
def test_matches_torch(expression):
    assert_same_outcome(expression, rtol=None, atol=None)  # LAPACK results: assert_close tolerances


def _gradients(library, function: str, arrays, seed: int = 1):
    inputs = [library.tensor(a, requires_grad=True) for a in arrays]
    result = eval(function, {"L": library})(*inputs)
    outputs = [r for r in (result if isinstance(result, tuple) else (result,))
               if r.dtype in (library.float64, library.complex128)]
    rng = np.random.default_rng(seed)
    total = sum(((o * library.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)).sum().abs()) for o in outputs)
    grads = library.autograd.grad(total, inputs, allow_unused=True)
    return [None if g is None else g.resolve_conj().numpy() if library is not tm else g.numpy() for g in grads]


_RNG = np.random.default_rng(0)
_SQUARE = _RNG.standard_normal((3, 3)) + 3 * np.eye(3)
_COMPLEX = _SQUARE + 1j * _RNG.standard_normal((3, 3))
_RHS = _RNG.standard_normal((3, 2))
_FACTOR = np.linalg.cholesky(_SQUARE @ _SQUARE.T)
_WIDE, _TALL = _RNG.standard_normal((2, 4)), _RNG.standard_normal((4, 2))

GRADIENT_CASES = [
    ("lambda A, B: L.linalg.solve_triangular(A, B, upper=True)", [_SQUARE, _RHS]),
    ("lambda A, B: L.linalg.solve_triangular(A, B, upper=False, left=False, unitriangular=True)", [_SQUARE, _RHS.T]),
    ("lambda A, B: L.linalg.solve_triangular(A, B, upper=False)", [_COMPLEX, _RHS + 0j]),
    ("lambda A: L.linalg.lu_factor(A).LU", [_SQUARE]), ("lambda A: L.linalg.lu_factor(A).LU", [_WIDE]),
    ("lambda A: L.linalg.lu_factor(A).LU", [_TALL]), ("lambda A: L.linalg.lu_factor(A).LU", [_COMPLEX]),
    ("lambda A: L.linalg.lu(A)", [_SQUARE]),
    ("lambda A: L.linalg.lu(A)", [_WIDE]), ("lambda A: L.linalg.lu(A)", [_TALL]),
    ("lambda A: L.lu_unpack(*L.linalg.lu_factor(A))", [_TALL]),
    ("lambda A, B: L.linalg.lu_solve(*L.linalg.lu_factor(A), B)", [_SQUARE, _RHS]),
    ("lambda A, B: L.linalg.lu_solve(*L.linalg.lu_factor(A), B, adjoint=True)", [_COMPLEX, _RHS + 0j]),
    ("lambda A, B: L.linalg.lu_solve(*L.linalg.lu_factor(A), B, left=False)", [_COMPLEX, _RHS.T + 0j]),
    ("lambda A, B: L.linalg.lu_solve(*L.linalg.lu_factor(A), B, left=False, adjoint=True)", [_SQUARE, _RHS.T]),
    ("lambda A, B: L.linalg.solve_ex(A, B).result", [_SQUARE, _RHS]),
    ("lambda A: L.linalg.inv_ex(A).inverse", [_COMPLEX]),
    ("lambda A: L.linalg.cholesky_ex(A @ A.mT).L", [_SQUARE]),
    ("lambda B, A: L.triangular_solve(B, A, upper=False, transpose=True)", [_RHS, _SQUARE]),
    ("lambda B, F: L.cholesky_solve(B, F)", [_RHS, _FACTOR]),
    ("lambda B, F: L.cholesky_solve(B, F.mT, True)", [_RHS, _FACTOR]),
    ("lambda F: L.cholesky_inverse(F)", [_FACTOR]), ("lambda F: L.cholesky_inverse(F.mT, upper=True)", [_FACTOR]),
    ("lambda a, u, v: L.addr(a, u, v, beta=0.5, alpha=-2)", [_SQUARE, _RHS[:, 0], _RHS[:, 1]]),
    ("lambda a, u, v: L.addr(a, u, v, alpha=1j)", [_COMPLEX, _RHS[:, 0] + 0j, _RHS[:, 1] + 1j]),
    ("lambda a, b: L.dist(a, b)", [_SQUARE, _RHS[:, 0]]), ("lambda a, b: L.dist(a, b, 3)", [_SQUARE, _SQUARE.T]),
    ("lambda a: L.renorm(a, 2, 0, 3.)", [_SQUARE]), ("lambda a: L.renorm(a, 1, 1, 4.)", [_COMPLEX]),
    ("lambda x, y: L.linalg.vecdot(x, y)", [_COMPLEX, _SQUARE + 0j]),
    ("lambda A: L.linalg.tensorinv(A.reshape(3, 3, 1), ind=1)", [_SQUARE]),
    ("lambda a, t, c: L.ormqr(a, t, c)", [_TALL, _RHS[:2, 0], _RNG.standard_normal((4, 3))]),
    ("lambda a, t, c: L.ormqr(a, t, c, left=False, transpose=True)", [_TALL, _RHS[:2, 0], _WIDE]),
    ("lambda a, t: L.orgqr(a, t)", [_TALL, _RHS[:2, 0]]),
    ("lambda A, B: L.linalg.tensorsolve(A.reshape(3, 3), B)", [_SQUARE, _RHS[:, 0]]),
]


@pytest.mark.torch
@pytest.mark.parametrize("function, arrays", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_gradients_match_torch(function, arrays):
    import torch

    ours, theirs = _gradients(tm, function, arrays), _gradients(torch, function, arrays)
    for o, t in zip(ours, theirs, strict=True):
        assert (o is None) == (t is None)
        if o is not None:
            np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)


# -- without torch: literals --------------------------------------------------------------------------

def test_lu_factor_gives_lapacks_pivots_and_rebuilds_the_input():
    A = tm.tensor([[1., 2., 0.], [3., 4., 1.], [0., 5., 6.]], dtype=tm.float64)
    LU, pivots, info = tm.linalg.lu_factor_ex(A)
    assert pivots.dtype == tm.int32 and pivots.tolist() == [2, 3, 3] and info.item() == 0
    P, L, U = tm.lu_unpack(LU, pivots)
    np.testing.assert_allclose((P @ L @ U).numpy(), A.numpy(), atol=1e-15)
    assert P.tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


@pytest.mark.torch
@pytest.mark.parametrize("shape", [(100, 100), (200, 130), (70, 150), (3, 80, 80)])
def test_pivots_of_larger_matrices_are_lapacks(shape):
    # LAPACK factors these blocked; the pivots (exact) and the factors (rounding) still agree
    import torch

    a = np.random.default_rng(5).standard_normal(shape)
    ours, theirs = tm.linalg.lu_factor(tm.tensor(a)), torch.linalg.lu_factor(torch.tensor(a))
    assert ours.pivots.tolist() == theirs.pivots.tolist()
    np.testing.assert_allclose(ours.LU.numpy(), theirs.LU.numpy(), rtol=1e-10, atol=1e-12)
    k = min(shape[-2:])
    symmetric = a[..., :k, :k] + np.swapaxes(a[..., :k, :k], -1, -2)
    ours, theirs = tm.linalg.ldl_factor(tm.tensor(symmetric)), torch.linalg.ldl_factor(torch.tensor(symmetric))
    assert ours.pivots.tolist() == theirs.pivots.tolist()
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.torch
def test_a_real_b_with_a_complex_a_has_no_gradient_as_in_pytorch():
    import torch

    messages = []
    for library in (tm, torch):
        A = library.tensor([[1 + 1j, 0], [1, 2j]], requires_grad=True)
        B = library.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        with pytest.raises(RuntimeError) as caught:
            library.linalg.solve_triangular(A, B, upper=False, left=False).abs().sum().backward()
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_singular_matrices_report_info_or_raise():
    assert tm.linalg.lu_factor_ex(tm.zeros(2, 2)).info.item() == 1
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        tm.linalg.lu_factor(tm.zeros(2, 2))
    result, info = tm.linalg.solve_ex(tm.zeros(2, 2), tm.ones(2))
    assert info.item() == 1 and np.isnan(result[0].item()) and result[1].item() == float("inf")
    with pytest.raises(tm.linalg.LinAlgError, match="singular"):
        tm.linalg.inv_ex(tm.zeros(2, 2), check_errors=True)


def test_solve_triangular_literal_and_zero_diagonal():
    A = tm.tensor([[2., 1.], [0., 4.]])
    assert tm.linalg.solve_triangular(A, tm.tensor([[4.], [8.]]), upper=True).tolist() == [[1.0], [2.0]]
    x = tm.linalg.solve_triangular(tm.zeros(2, 2), tm.ones(2, 1), upper=True)
    assert np.isnan(x[0, 0].item()) and x[1, 0].item() == float("inf")


def test_cholesky_ex_leaves_lapacks_partial_factor():
    L, info = tm.linalg.cholesky_ex(tm.tensor([[1., 2, 3], [2, 1, 5], [3, 5, 9]]))
    assert info.item() == 2 and L.tolist() == [[1.0, 0.0, 0.0], [2.0, -3.0, 0.0], [3.0, 5.0, 9.0]]


def test_cholesky_solve_and_inverse_literals():
    L = tm.linalg.cholesky(tm.tensor([[4., 2.], [2., 5.]], dtype=tm.float64))
    assert tm.cholesky_solve(tm.tensor([[6.], [7.]], dtype=tm.float64), L).tolist() == [[1.0], [1.0]]
    np.testing.assert_allclose(tm.cholesky_inverse(L).numpy(), np.linalg.inv([[4., 2.], [2., 5.]]), rtol=1e-15)


def test_deprecated_functions_warn_once_and_removed_ones_raise():
    from tensormodes._ops import linalg_lu
    linalg_lu._WARNED.discard(next((m for m in linalg_lu._WARNED if m.startswith("torch.lu is")), ""))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tm.lu(tm.eye(2))
        tm.lu(tm.eye(2))
    messages = [str(w.message) for w in caught if str(w.message).startswith("torch.lu is deprecated")]
    assert len(messages) == 1
    with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
        tm.eye(2).symeig()


def test_addr_dist_renorm_literals():
    assert tm.addr(tm.zeros(2, 2), tm.tensor([1., 2.]), tm.tensor([3., 4.]), alpha=2).tolist() == [[6.0, 8.0],
                                                                                                  [12.0, 16.0]]
    assert tm.dist(tm.tensor([1., 2.]), tm.tensor([4., 6.])).item() == 5.0
    factor = 1.0 / (5.0 + 1e-7)  # maxnorm / (norm + 1e-7), as PyTorch's kernel
    assert tm.renorm(tm.tensor([[3., 4.], [0.3, 0.4]], dtype=tm.float64), 2, 0, 1.0).tolist() == \
        [[3 * factor, 4 * factor], [0.3, 0.4]]
