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
    with pytest.raises(ValueError, match="mode must be 'reduced' or 'complete'"):
        ar.linalg.qr(x, mode="r")
    assert ar.linalg.qr(x, mode="complete").Q.shape == (40, 40)
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
    with pytest.raises(ValueError, match="needs square matrices"):
        ar.linalg.inv(ar.ones((3, 2)))
    with pytest.raises(ar.TaskError, match="singular"):
        ar.linalg.inv(ar.ones((3, 3))).compute()


# -- the rest of the extension (issue 30) -------------------------------------------------

def _spd(n, seed=0, batch=()):
    b = np.random.default_rng(seed).standard_normal(batch + (n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("offset", [0, 1, 3, -2, 7, -9])
def test_diagonal_and_trace_match_numpy(offset):
    a = np.random.default_rng(1).standard_normal((2, 7, 5))
    x = ar.from_numpy(a, chunks=(1, 3, 2))
    want = np.diagonal(a, offset=offset, axis1=-2, axis2=-1)
    np.testing.assert_array_equal(ar.linalg.diagonal(x, offset=offset).compute(), want)
    np.testing.assert_allclose(ar.linalg.trace(x, offset=offset).compute(),
                               np.trace(a, offset=offset, axis1=-2, axis2=-1), atol=1e-12)
    ints = np.arange(35, dtype=np.int64).reshape(5, 7)
    t = ar.linalg.trace(ar.from_numpy(ints, chunks=2), offset=offset)
    assert t.dtype == np.int64 and t.compute() == np.trace(ints, offset=offset)
    f32 = ar.from_numpy(a.astype(np.float32), chunks=3)
    assert ar.linalg.trace(f32, dtype=np.float64).dtype == np.float64
    assert ar.linalg.diagonal(f32).dtype == np.float32


def test_outer_vecdot_cross_match_numpy():
    rng = np.random.default_rng(2)
    u, v = rng.standard_normal(9), rng.standard_normal(4)
    got = ar.linalg.outer(ar.from_numpy(u, chunks=4), ar.from_numpy(v, chunks=3)).compute()
    np.testing.assert_allclose(got, np.outer(u, v), atol=1e-14)
    a, b = rng.standard_normal((4, 6, 5)), rng.standard_normal((6, 5))
    xa, xb = ar.from_numpy(a, chunks=(2, 3, 2)), ar.from_numpy(b, chunks=(4, 5))
    np.testing.assert_allclose(ar.linalg.vecdot(xa, xb).compute(), np.linalg.vecdot(a, b),
                               atol=1e-12)
    np.testing.assert_allclose(ar.linalg.vecdot(xa, xb, axis=-2).compute(),
                               np.linalg.vecdot(a, b, axis=-2), atol=1e-12)
    ints = ar.from_numpy(np.arange(12, dtype=np.int32).reshape(4, 3), chunks=2)
    got = ar.vecdot(ints, ints)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.compute(), np.linalg.vecdot(np.arange(12, dtype=np.int32)
                                                                   .reshape(4, 3),
                                                                   np.arange(12, dtype=np.int32)
                                                                   .reshape(4, 3)))
    c, d = rng.standard_normal((5, 3)), rng.standard_normal((3,))
    xc, xd = ar.from_numpy(c, chunks=(2, 2)), ar.from_numpy(d, chunks=1)
    np.testing.assert_allclose(ar.linalg.cross(xc, xd).compute(), np.linalg.cross(c, d),
                               atol=1e-14)
    e = rng.standard_normal((3, 4))
    np.testing.assert_allclose(
        ar.linalg.cross(ar.from_numpy(e, chunks=2), ar.from_numpy(e[::-1].copy(), chunks=2),
                        axis=0).compute(),
        np.linalg.cross(e, e[::-1], axis=0), atol=1e-14)
    with pytest.raises(ValueError, match="needs vectors of 3 elements along axis -1"):
        ar.linalg.cross(xa, xa)
    with pytest.raises(ValueError, match="needs two vectors"):
        ar.linalg.outer(xc, xd)
    with pytest.raises(ValueError, match="same length along axis -1"):
        ar.linalg.vecdot(xa, xc)


@pytest.mark.parametrize("ord", [2, 1, 0, np.inf, -np.inf, 3, 0.5, -1])
@pytest.mark.parametrize("axis", [None, 0, (1, 2), -1])
def test_vector_norm_matches_numpy(ord, axis):
    a = np.random.default_rng(3).standard_normal((3, 4, 5))
    a[0, 0, 0] = 0.0
    x = ar.from_numpy(a, chunks=2)
    for keepdims in (False, True):
        got = np.asarray(ar.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord).compute())
        want = np.linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_matches_numpy(ord):
    rng = np.random.default_rng(4)
    for a, chunks in [(rng.standard_normal((9, 6)), (4, 4)), (rng.standard_normal((3, 5, 4)), 2)]:
        x = ar.from_numpy(a, chunks=chunks)
        for keepdims in (False, True):
            got = np.asarray(ar.linalg.matrix_norm(x, keepdims=keepdims, ord=ord).compute())
            want = np.linalg.matrix_norm(a, keepdims=keepdims, ord=ord)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-11)
    ints = ar.from_numpy(np.arange(12).reshape(3, 4), chunks=2)
    assert ar.linalg.matrix_norm(ints, ord=ord).dtype == np.float64
    with pytest.raises(ValueError, match="ord must be"):
        ar.linalg.matrix_norm(x, ord=3)


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power_matches_numpy(n):
    a = _spd(6, seed=5) / 6
    x = ar.from_numpy(a, chunks=4)
    np.testing.assert_allclose(ar.linalg.matrix_power(x, n).compute(),
                               np.linalg.matrix_power(a, n), rtol=1e-10, atol=1e-12)
    stack = np.stack([a, a.T * 0.5])
    np.testing.assert_allclose(ar.linalg.matrix_power(ar.from_numpy(stack, chunks=3), n).compute(),
                               np.linalg.matrix_power(stack, n), rtol=1e-10, atol=1e-12)
    ints = np.arange(9).reshape(3, 3) % 4
    if n >= 0:
        got = ar.linalg.matrix_power(ar.from_numpy(ints, chunks=2), n).compute()
        np.testing.assert_array_equal(got, np.linalg.matrix_power(ints, n))


def test_solve_and_slogdet_match_numpy():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((40, 40)) + 10 * np.eye(40)
    b = rng.standard_normal((40, 3))
    x = ar.from_numpy(a, chunks=16)
    np.testing.assert_allclose(ar.linalg.solve(x, ar.from_numpy(b, chunks=16)).compute(),
                               np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)
    v = rng.standard_normal(40)
    got = ar.linalg.solve(x, ar.from_numpy(v, chunks=16)).compute()
    assert got.shape == (40,)
    np.testing.assert_allclose(got, np.linalg.solve(a, v), rtol=1e-10, atol=1e-12)
    res = ar.linalg.slogdet(x)
    assert type(res).__name__ == "SlogdetResult"
    sign, logabs = ar.compute(*res)
    want = np.linalg.slogdet(a)
    assert sign == want.sign
    np.testing.assert_allclose(logabs, want.logabsdet, rtol=1e-12)
    sign, logabs = ar.compute(*ar.linalg.slogdet(ar.ones((3, 3))))
    assert sign == 0 and logabs == -np.inf
    with pytest.raises(ar.TaskError, match="singular"):
        ar.linalg.solve(ar.ones((3, 3)), ar.ones(3)).compute()
    with pytest.raises(ValueError, match="do not have the matrices' 40 rows"):
        ar.linalg.solve(x, ar.ones((39, 2)))


def test_stacked_matrices_in_every_factorization():
    rng = np.random.default_rng(7)
    spd = _spd(5, seed=7, batch=(3, 2))
    x = ar.from_numpy(spd, chunks=(2, 1, 5, 5))
    np.testing.assert_allclose(ar.linalg.cholesky(x).compute(), np.linalg.cholesky(spd),
                               atol=1e-12)
    np.testing.assert_allclose(ar.linalg.inv(x).compute(), np.linalg.inv(spd), atol=1e-12)
    np.testing.assert_allclose(ar.linalg.det(x).compute(), np.linalg.det(spd), rtol=1e-12)
    sign, logabs = ar.compute(*ar.linalg.slogdet(x))
    np.testing.assert_allclose(sign, np.linalg.slogdet(spd).sign)
    np.testing.assert_allclose(logabs, np.linalg.slogdet(spd).logabsdet, rtol=1e-12)
    w, v = ar.compute(*ar.linalg.eigh(x))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(spd), rtol=1e-12)
    np.testing.assert_allclose((v * w[..., None, :]) @ np.swapaxes(v, -1, -2), spd, atol=1e-10)
    np.testing.assert_allclose(ar.linalg.eigvalsh(x).compute(), np.linalg.eigvalsh(spd),
                               rtol=1e-12)
    b = rng.standard_normal((2, 5, 4))  # batch broadcast against (3, 2)
    np.testing.assert_allclose(ar.linalg.solve(x, ar.from_numpy(b, chunks=2)).compute(),
                               np.linalg.solve(spd, b), atol=1e-12)
    tall = rng.standard_normal((4, 7, 3))
    t = ar.from_numpy(tall, chunks=(3, 7, 3))
    q, r = ar.compute(*ar.linalg.qr(t))
    assert q.shape == (4, 7, 3) and r.shape == (4, 3, 3)
    np.testing.assert_allclose(q @ r, tall, atol=1e-12)
    u, s, vh = ar.compute(*ar.linalg.svd(t))
    np.testing.assert_allclose(s, np.linalg.svd(tall, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, tall, atol=1e-12)
    np.testing.assert_allclose(ar.linalg.svdvals(t).compute(), np.linalg.svdvals(tall), rtol=1e-12)
    np.testing.assert_allclose(ar.linalg.pinv(t).compute(), np.linalg.pinv(tall), atol=1e-12)
    np.testing.assert_array_equal(ar.linalg.matrix_rank(t).compute(), np.linalg.matrix_rank(tall))
    np.testing.assert_allclose(ar.linalg.matrix_transpose(t).compute(), np.swapaxes(tall, -1, -2))


@pytest.mark.parametrize("m,n,rows", [(300, 6, 50), (6, 9, 3), (20, 20, 7)])
def test_pinv_and_matrix_rank_match_numpy(m, n, rows):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((m, n))
    low = rng.standard_normal((m, 2)) @ rng.standard_normal((2, n))  # rank 2
    for mat in (a, low):
        x = ar.from_numpy(mat, chunks=(rows, 4))
        np.testing.assert_allclose(ar.linalg.pinv(x).compute(), np.linalg.pinv(mat), atol=1e-10)
        assert ar.linalg.matrix_rank(x).compute() == np.linalg.matrix_rank(mat)
    x = ar.from_numpy(a, chunks=(rows, 4))
    np.testing.assert_allclose(ar.linalg.pinv(x, rtol=0.5).compute(),
                               np.linalg.pinv(a, rtol=0.5), atol=1e-10)
    rtol = ar.from_numpy(np.asarray(0.5))
    np.testing.assert_allclose(ar.linalg.pinv(x, rtol=rtol).compute(),
                               np.linalg.pinv(a, rtol=0.5), atol=1e-10)
    assert ar.linalg.matrix_rank(x, rtol=0.5).compute() == np.linalg.matrix_rank(a, rtol=0.5)


@pytest.mark.parametrize("shape", [(9, 4), (3, 7), (2, 5, 3)])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_svd_and_pinv_match_numpy(shape, dtype):
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    x = ar.from_numpy(a, chunks=2)
    tol = 1e-10 if dtype == np.complex128 else 1e-4
    p = ar.linalg.pinv(x).compute()
    assert p.dtype == dtype
    np.testing.assert_allclose(p, np.linalg.pinv(a), atol=tol)
    u, s, vh = ar.compute(*ar.linalg.svd(x))
    assert (u.dtype, s.dtype) == (np.dtype(dtype), np.finfo(dtype).dtype)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=tol)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, atol=tol)
    np.testing.assert_allclose(ar.linalg.svdvals(x).compute(), np.linalg.svdvals(a), rtol=tol)
    assert (ar.linalg.matrix_rank(x).compute() == np.linalg.matrix_rank(a)).all()


@pytest.mark.parametrize("shape", [(5, 5), (2, 4, 4)])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_factorizations_match_numpy(shape, dtype):
    rng = np.random.default_rng(13)
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    n = shape[-1]
    herm = (np.conj(np.swapaxes(z, -1, -2)) @ z + n * np.eye(n)).astype(dtype)
    x, h = ar.from_numpy(z, chunks=2), ar.from_numpy(herm, chunks=2)
    tol = 1e-9 if dtype == np.complex128 else 1e-3
    real = np.finfo(dtype).dtype

    def same(got, want, dt=dtype):
        if isinstance(got, np.ndarray):  # a 0-d result comes back as a Python number
            assert got.dtype == dt
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)

    same(ar.linalg.inv(x).compute(), np.linalg.inv(z))
    same(ar.linalg.det(x).compute(), np.linalg.det(z))
    sign, logabs = ar.compute(*ar.linalg.slogdet(x))
    want_sign, want_log = np.linalg.slogdet(z)
    same(sign, want_sign)
    same(logabs, want_log, real)
    b = z[..., :2]
    same(ar.linalg.solve(x, ar.from_numpy(b, chunks=2)).compute(), np.linalg.solve(z, b))
    same(ar.linalg.cholesky(h).compute(), np.linalg.cholesky(herm))
    same(ar.linalg.cholesky(h, upper=True).compute(), np.linalg.cholesky(herm, upper=True))
    w, v = ar.compute(*ar.linalg.eigh(h))
    same(w, np.linalg.eigvalsh(herm), real)
    same(ar.linalg.eigvalsh(h).compute(), np.linalg.eigvalsh(herm), real)
    # Eigenvectors up to a phase each: H·v = v·w.
    np.testing.assert_allclose(herm @ v, v * w[..., None, :], atol=tol * 10 * n)
    q, r = ar.compute(*ar.linalg.qr(x))
    assert q.dtype == dtype and r.dtype == dtype
    np.testing.assert_allclose(q @ r, z, atol=tol)
    np.testing.assert_allclose(np.conj(np.swapaxes(q, -1, -2)) @ q, np.broadcast_to(np.eye(n), q.shape), atol=tol)
    same(ar.linalg.matrix_power(x, -2).compute(), np.linalg.matrix_power(z, -2))


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_norms_of_complex_tensors_are_numpys_real_ones(dtype):
    # x·x of a complex number is not |x|²: the norms read magnitudes, the spectral and
    # nuclear ones the matrix's own singular values.
    rng = np.random.default_rng(12)
    a = (rng.standard_normal((2, 6, 5)) + 1j * rng.standard_normal((2, 6, 5))).astype(dtype)
    a[0, 1, 2] = 0
    x = ar.from_numpy(a, chunks=(1, 4, 2))
    real = np.finfo(dtype).dtype
    tol = 1e-12 if dtype == np.complex128 else 1e-5
    for ord in (2, 1, np.inf, -np.inf, 0, 3, -1):
        got = ar.linalg.vector_norm(x, axis=(-2, -1), ord=ord).compute()
        assert got.dtype == real, ord
        np.testing.assert_allclose(got, np.linalg.vector_norm(a, axis=(-2, -1), ord=ord), rtol=tol)
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        got = ar.linalg.matrix_norm(x, ord=ord).compute()
        assert got.dtype == real, ord
        np.testing.assert_allclose(got, np.linalg.matrix_norm(a, ord=ord), rtol=tol)


@pytest.mark.parametrize("m,n,k", [(500, 5, None), (500, 5, 3), (4, 7, 2)])
def test_lstsq_matches_numpy(m, n, k):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((m, n))
    b = rng.standard_normal((m,) if k is None else (m, k))
    res = ar.linalg.lstsq(ar.from_numpy(a, chunks=(100, n)), ar.from_numpy(b, chunks=100))
    assert type(res).__name__ == "LstsqResult"
    x, residuals, rank, s = ar.compute(*res)
    wx, wres, wrank, ws = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x, wx, rtol=1e-9, atol=1e-12)
    assert residuals.shape == wres.shape
    np.testing.assert_allclose(residuals, wres, rtol=1e-9)
    assert rank == wrank
    np.testing.assert_allclose(s, ws, rtol=1e-12)



@pytest.mark.parametrize("chunks", [(12, 12), (12, 20), (50, 7)])
def test_blocked_lu_and_cholesky_match_numpy(chunks):
    """A general matrix (pivoting matters) chunked in both dimensions: solve, inv, det and
    slogdet by the blocked LU, cholesky by the tile algorithm, against NumPy's LAPACK."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((50, 50))
    a[0, 0] = 0.0  # the first pivot must come from another row
    b = rng.standard_normal((50, 4))
    x = ar.from_numpy(a, chunks=chunks)
    np.testing.assert_allclose(ar.linalg.solve(x, ar.from_numpy(b, chunks=10)).compute(),
                               np.linalg.solve(a, b), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ar.linalg.inv(x).compute(), np.linalg.inv(a), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ar.linalg.det(x).compute(), np.linalg.det(a), rtol=1e-10)
    sign, logabs = ar.compute(*ar.linalg.slogdet(x))
    want = np.linalg.slogdet(a)
    assert sign == want.sign
    np.testing.assert_allclose(logabs, want.logabsdet, rtol=1e-12)
    spd = a @ a.T + 50 * np.eye(50)
    y = ar.from_numpy(spd, chunks=chunks)
    np.testing.assert_allclose(ar.linalg.cholesky(y).compute(), np.linalg.cholesky(spd), atol=1e-10)
    np.testing.assert_allclose(ar.linalg.cholesky(y, upper=True).compute(),
                               np.linalg.cholesky(spd).T, atol=1e-10)
    singular = np.ones((50, 50))
    with pytest.raises(ar.TaskError, match="singular"):
        ar.linalg.solve(ar.from_numpy(singular, chunks=chunks), ar.from_numpy(b)).compute()
    assert ar.linalg.det(ar.from_numpy(singular, chunks=chunks)).compute() == 0.0
