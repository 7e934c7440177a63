//! The differential test of issue 14: random programs (`gen`, `ops`, `gendd`, `errors`) over
//! the AST of `ast`, an independent whole-array reference (`refarr`, `refshape`, `refeval`,
//! `refmore`, `refnew`, `reflinalg`, `refdd`), the NumPy oracle (`numpy`), ares in every mode
//! (`ares`), and the comparison (`value`, `check`).
#![allow(dead_code)]

pub mod ares;
pub mod ast;
pub mod check;
pub mod errors;
pub mod gen;
pub mod gendd;
pub mod numpy;
pub mod ops;
pub mod ops2;
pub mod refarr;
pub mod refdd;
pub mod refeval;
pub mod reflinalg;
pub mod refmore;
pub mod refnew;
pub mod refshape;
pub mod value;
