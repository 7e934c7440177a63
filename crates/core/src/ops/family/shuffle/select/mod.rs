//! The operations whose result depends on the values: `unique` (through a shuffle),
//! `x[mask]` (chunk by chunk) and `compress` built on it ([`compress`]), and `searchsorted` (values routed to the sorted chunk they fall into, [`search`]):
//! their tensor API and shape rules ([`tensor`], [`infer`]), tiling ([`tile`]) and kernels
//! ([`kernels`]).

mod compress;
pub(crate) mod infer;
pub mod kernels;
pub mod search;
pub(crate) mod tensor;
mod tile;
