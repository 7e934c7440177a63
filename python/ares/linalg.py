"""The array API's ``linalg`` extension (2024.12): ``cholesky cross det diagonal eigh
eigvalsh inv matmul matrix_norm matrix_power matrix_rank matrix_transpose outer pinv qr
slogdet solve svd svdvals tensordot trace vecdot vector_norm``, plus NumPy's ``lstsq`` and
dask's ``svd_compressed`` (randomized SVD). Every function takes stacks of matrices (the
leading axes chunked, each matrix whole in one chunk of the factorizations).

QR and SVD of a tall-and-skinny matrix chunked along its rows run by TSQR: each row chunk is
factored on its own, the R factors in a tree, and Q assembled chunk by chunk, so no task
holds the whole matrix. A short-and-fat matrix is decomposed through its transpose (SVD) or
in one chunk (QR). The factors are lazy tensors like any other; several results come back as
named tuples, as NumPy's (``QRResult(Q, R)``, ``SVDResult(U, S, Vh)``).
"""

from __future__ import annotations

import collections as _collections

from ._tensor import Tensor as _Tensor, apply as _apply

QRResult = _collections.namedtuple("QRResult", ["Q", "R"])
SVDResult = _collections.namedtuple("SVDResult", ["U", "S", "Vh"])
EighResult = _collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SlogdetResult = _collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])
LstsqResult = _collections.namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def qr(x, /, *, mode="reduced") -> QRResult:
    """Reduced QR: ``Q`` (m × k, orthonormal columns) and ``R`` (k × n, upper triangular),
    k = min(m, n); ``mode='complete'``: ``Q`` (m × m, orthogonal) and ``R`` (m × n), the
    reduced QR of ``[x | I]`` for a tall ``x`` (its square Q is m × m: dense in m)."""
    return QRResult(*_apply("linalg.qr", (x,), {"mode": mode}))


def svd(x, /, *, full_matrices=False) -> SVDResult:
    """Thin SVD: ``U`` (m × k), ``S`` (k, nonincreasing), ``Vh`` (k × n). Only
    ``full_matrices=False`` (NumPy's default is True; a chunked SVD gives the thin factors,
    as dask's)."""
    return SVDResult(*_apply("linalg.svd", (x,), {"full_matrices": full_matrices}))


def svdvals(x, /) -> _Tensor:
    """The singular values, nonincreasing."""
    return _apply("linalg.svdvals", (x,))


def svd_compressed(x, k, n_power_iter=0, seed=None) -> SVDResult:
    """dask's ``svd_compressed``: the rank-``k`` SVD by randomized range finding (Halko et
    al. 2011) with ``n_power_iter`` power iterations; ``seed`` fixes the test matrix."""
    return SVDResult(*_apply("linalg.svd_compressed", (x, k),
                             {"n_power_iter": n_power_iter, "seed": seed}))


def cholesky(x, /, *, upper=False) -> _Tensor:
    """The Cholesky factor of a symmetric positive-definite matrix (one chunk)."""
    return _apply("linalg.cholesky", (x,), {"upper": upper})


def inv(x, /) -> _Tensor:
    """The inverse of a square matrix (one chunk; a singular one fails the task)."""
    return _apply("linalg.inv", (x,))


def det(x, /) -> _Tensor:
    """The determinant of a square matrix, a 0-d tensor (one chunk)."""
    return _apply("linalg.det", (x,))


def eigh(x, /) -> EighResult:
    """Eigenvalues (nondecreasing) and eigenvectors of a symmetric matrix (one chunk)."""
    return EighResult(*_apply("linalg.eigh", (x,)))


def eigvalsh(x, /) -> _Tensor:
    """Eigenvalues of a symmetric matrix, nondecreasing (one chunk)."""
    return _apply("linalg.eigvalsh", (x,))


def slogdet(x, /) -> SlogdetResult:
    """The sign of the determinant and the natural log of its absolute value (sign 0 and
    log -inf for a singular matrix)."""
    return SlogdetResult(*_apply("linalg.slogdet", (x,)))


def solve(x1, x2, /) -> _Tensor:
    """``x`` with ``x1 @ x == x2`` (LU with partial pivoting per matrix); ``x2`` is
    ``(..., M, K)`` with leading axes broadcast against ``x1``'s, or a vector ``(M,)``. A
    singular matrix fails the task."""
    return _apply("linalg.solve", (x1, x2))


def pinv(x, /, *, rtol=None) -> _Tensor:
    """The pseudo-inverse from the SVD; singular values at most ``rtol * max(s)`` count as
    zero (``rtol`` defaults to ``max(M, N) * eps``)."""
    return _apply("linalg.pinv", (x,), {"rtol": rtol})


def matrix_rank(x, /, *, rtol=None) -> _Tensor:
    """The number of singular values above ``rtol * max(s)`` (int64)."""
    return _apply("linalg.matrix_rank", (x,), {"rtol": rtol})


def lstsq(a, b, rcond=None) -> LstsqResult:
    """NumPy's ``lstsq``: the least-squares solution (minimum-norm when ``a`` is rank
    deficient) from the SVD, which for a tall-and-skinny ``a`` is TSQR's. ``residuals`` are
    the squared norms of ``b - a @ x`` per column when M > N, empty when M <= N; NumPy also
    returns them empty when the rank is below N, which ares knows only once computed."""
    return LstsqResult(*_apply("linalg.lstsq", (a, b), {"rcond": rcond}))


def matmul(x1, x2, /) -> _Tensor:
    return _apply("matmul", (x1, x2))


def tensordot(x1, x2, /, *, axes=2) -> _Tensor:
    return _apply("tensordot", (x1, x2), {"axes": axes})


def matrix_transpose(x, /) -> _Tensor:
    """The last two axes swapped."""
    return _apply("linalg.matrix_transpose", (x,))


def diagonal(x, /, *, offset=0) -> _Tensor:
    """The ``offset``-th diagonal of each matrix, along a new last axis."""
    return _apply("linalg.diagonal", (x,), {"offset": offset})


def trace(x, /, *, offset=0, dtype=None) -> _Tensor:
    """The sum of each matrix's ``offset``-th diagonal (in ``dtype`` when given)."""
    return _apply("linalg.trace", (x,), {"offset": offset, "dtype": dtype})


def outer(x1, x2, /) -> _Tensor:
    """The outer product of two vectors."""
    return _apply("linalg.outer", (x1, x2))


def vecdot(x1, x2, /, *, axis=-1) -> _Tensor:
    """The dot product of the vectors along ``axis``, the other axes broadcast."""
    return _apply("linalg.vecdot", (x1, x2), {"axis": axis})


def cross(x1, x2, /, *, axis=-1) -> _Tensor:
    """The cross product of 3-vectors along ``axis``, the other axes broadcast."""
    return _apply("linalg.cross", (x1, x2), {"axis": axis})


def matrix_power(x, n, /) -> _Tensor:
    """``x`` multiplied by itself ``n`` times (the identity for 0, powers of the inverse
    for negative ``n``)."""
    return _apply("linalg.matrix_power", (x, n))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2) -> _Tensor:  # noqa: A002
    """The vector norm over ``axis`` (all axes when None): ``ord`` p, ``inf``, ``-inf``, 0."""
    return _apply("linalg.vector_norm", (x,), {"axis": axis, "keepdims": keepdims, "ord": ord})


def matrix_norm(x, /, *, keepdims=False, ord="fro") -> _Tensor:  # noqa: A002
    """The norm of each matrix (last two axes): ``'fro'``, ``'nuc'``, 1, -1, 2, -2, ``inf``,
    ``-inf``."""
    return _apply("linalg.matrix_norm", (x,), {"keepdims": keepdims, "ord": ord})


del annotations  # `from __future__ import annotations` is not part of the API
