"""The array API's ``linalg`` extension, as far as ares has it: ``ar.linalg.qr``, ``svd``,
``svdvals``, ``svd_compressed`` (dask's randomized SVD), ``cholesky``, ``inv``, ``det``,
``eigh``, ``eigvalsh`` (a square matrix in one chunk), and ``matmul``, ``tensordot`` and
``matrix_transpose`` (the same functions as ``ar.NAME``).

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


def qr(x, /, *, mode="reduced") -> QRResult:
    """Reduced QR: ``Q`` (m × k, orthonormal columns) and ``R`` (k × n, upper triangular),
    k = min(m, n). Only ``mode='reduced'``."""
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


def matmul(x1, x2, /) -> _Tensor:
    return _apply("matmul", (x1, x2))


def tensordot(x1, x2, /, *, axes=2) -> _Tensor:
    return _apply("tensordot", (x1, x2), {"axes": axes})


def matrix_transpose(x, /) -> _Tensor:
    return x.mT


del annotations  # `from __future__ import annotations` is not part of the API
