"""``ar.linalg`` against ``numpy.linalg``: QR and SVD by TSQR (reconstruction, orthogonality,
R and the singular values equal to NumPy's up to signs), ``svdvals``, ``svd_compressed``
(rank-k reconstruction of a rank-k matrix), the refusals, and the named tuples."""

from __future__ import annotations

import numpy as np
import pytest

import ares as ar


def _matrix(m, n, seed=0):
    return np.random.default_rng(seed).standard_normal((m, n))


@pytest.mark.parametrize("m,n,rows", [(1000, 8, 100), (230, 7, 20), (50, 5, 50), (6, 9, 3)])
def test_qr_matches_numpy(m, n, rows):
    a = _matrix(m, n)
    x = ar.from_numpy(a, chunks=(rows, 3))
    q, r = ar.linalg.qr(x)
    q, r = ar.compute(q, r)
    k = min(m, n)
    assert q.shape == (m, k) and r.shape == (k, n)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(q.T @ q, np.eye(k), atol=1e-12)
    assert np.allclose(np.tril(r, -1), 0)
    want = np.linalg.qr(a, mode="reduced").R
    signs = np.sign(np.diag(r)) * np.sign(np.diag(want))
    np.testing.assert_allclose(r, signs[:, None] * want, atol=1e-10)


def test_qr_result_is_a_named_tuple_and_keeps_float32():
    x = ar.from_numpy(_matrix(40, 3).astype(np.float32), chunks=10)
    res = ar.linalg.qr(x)
    assert type(res).__name__ == "QRResult" and res.Q is res[0] and res.R is res[1]
    assert res.Q.dtype == np.float32 and res.Q.shape == (40, 3)
    with pytest.raises(ValueError, match="only mode='reduced'"):
        ar.linalg.qr(x, mode="complete")
    with pytest.raises(ValueError, match="needs a matrix"):
        ar.linalg.qr(ar.ones(4))


@pytest.mark.parametrize("m,n", [(600, 6), (6, 600), (40, 40)])
def test_svd_and_svdvals_match_numpy(m, n):
    a = _matrix(m, n, seed=3)
    x = ar.from_numpy(a, chunks=(100, 100))
    res = ar.linalg.svd(x, full_matrices=False)
    assert type(res).__name__ == "SVDResult"
    u, s, vh = ar.compute(*res)
    k = min(m, n)
    assert u.shape == (m, k) and s.shape == (k,) and vh.shape == (k, n)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-11)
    np.testing.assert_allclose(u.T @ u, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(vh @ vh.T, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(ar.linalg.svdvals(x).compute(), np.linalg.svdvals(a), rtol=1e-12)
    with pytest.raises(ValueError, match="full_matrices=False"):
        ar.linalg.svd(x, full_matrices=True)


def test_svd_compressed_recovers_a_low_rank_matrix():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2000, 4)) @ rng.standard_normal((4, 60))
    x = ar.from_numpy(a, chunks=(250, 60))
    u, s, vh = ar.compute(*ar.linalg.svd_compressed(x, 4, n_power_iter=1, seed=7))
    assert u.shape == (2000, 4) and s.shape == (4,) and vh.shape == (4, 60)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False)[:4], rtol=1e-9)
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-9)
    with pytest.raises(ValueError, match="k must be in"):
        ar.linalg.svd_compressed(x, 0)


def test_aliases_of_the_extension():
    a = _matrix(7, 5)
    x = ar.from_numpy(a, chunks=3)
    np.testing.assert_allclose(ar.linalg.matmul(x, x.T).compute(), a @ a.T, atol=1e-12)
    np.testing.assert_allclose(ar.linalg.matrix_transpose(x).compute(), a.T)
    np.testing.assert_allclose(ar.linalg.tensordot(x, x, axes=((0,), (0,))).compute(),
                               np.tensordot(a, a, axes=((0,), (0,))), atol=1e-12)


def test_square_factorizations_match_numpy():
    b = _matrix(30, 30, seed=9)
    a = b.T @ b + 30 * np.eye(30)
    x = ar.from_numpy(a, chunks=7)
    np.testing.assert_allclose(ar.linalg.cholesky(x).compute(), np.linalg.cholesky(a), atol=1e-10)
    np.testing.assert_allclose(ar.linalg.cholesky(x, upper=True).compute(),
                               np.linalg.cholesky(a).T, atol=1e-10)
    np.testing.assert_allclose(ar.linalg.inv(x).compute(), np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(ar.linalg.det(x).compute(), np.linalg.det(a), rtol=1e-10)
    res = ar.linalg.eigh(x)
    assert type(res).__name__ == "EighResult"
    w, v = ar.compute(*res)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-10)
    np.testing.assert_allclose((v * w) @ v.T, a, atol=1e-9)
    np.testing.assert_allclose(ar.linalg.eigvalsh(x).compute(), np.linalg.eigvalsh(a), rtol=1e-10)
    with pytest.raises(ValueError, match="needs a square matrix"):
        ar.linalg.inv(ar.ones((3, 2)))
    with pytest.raises(ar.TaskError, match="singular"):
        ar.linalg.inv(ar.ones((3, 3))).compute()
