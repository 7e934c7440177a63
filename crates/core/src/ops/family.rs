//! The op families, one module each (see [`crate::ops::registry`]): a family owns its ops'
//! table, and, as the families move in, their argument checks, inference, tiling and kernels.
//!
//! Each family's folder: `elementwise` (the ufunc table, dtype rules, array kernels,
//! scalar loops, tiling), `reduction` (its table of folds and scans, dtype rule, kernels,
//! the fused kernel's fold steps, tiling), `creation` (constructors, tiling, kernels, block
//! generators), `linalg` (the matmul shape rule, NumPy's products, tiling into block
//! products, the GEMM kernels), `fft` (the Fourier transforms: one op per axis, whole in
//! one chunk), `io` (the file constructors and writes, their tiling), `shuffle` (tiling into
//! mappers, a proxy and reducers; sort; the mapper and reducer kernels; `select/` for
//! unique, `x[mask]` and searchsorted, `take/` for `x[idx]`) and `manipulation` (slice,
//! transpose, concatenate, reshape: tiling and kernels; rechunking by shuffle); `statistics`
//! (NumPy's nan-reductions and exact quantiles, composed of the others' ops). Shared
//! outside them: the dispatch by family (`prepare::tile`, `kernels`), `OpArgs`, shape
//! inference (`ops::infer`) and the composite functions (`tensor`).

pub mod creation;
pub mod elementwise;
pub mod fft;
pub mod graph;
pub mod io;
pub mod linalg;
pub mod manipulation;
pub mod python_call;
pub mod reduction;
pub mod shuffle;
pub mod statistics;
