//! Integer-array indexing (`take`, `x[idx]`): rows gathered at int64 positions through two
//! shuffles: tiling ([`tile`]) and the route, serve and place kernels ([`kernels`]).

pub mod kernels;
mod tile;
