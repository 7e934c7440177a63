//! The data functions of the expression language: `from_npy('path', chunk=None)`,
//! `from_zarr('path', chunk=None)`, `to_npy(x, 'path')`,
//! `to_zarr(x, 'path', chunk=None, codec='zstd')`.

use super::args::{to_chunk, Args};
use super::eval::{Ctx, Value};
use super::{err, ExprError, Pos};
use crate::io::Codec;
use crate::tensor::{self, Tensor};

fn string(v: (Value, Pos), what: &str) -> Result<String, ExprError> {
    match v {
        (Value::Str(s), _) => Ok(s),
        (_, p) => err(p, format!("{what} must be a string")),
    }
}

impl Ctx {
    pub(super) fn call_io(&mut self, name: &str, a: Args) -> Result<Value, ExprError> {
        let p = a.pos;
        let wrap =
            |r: crate::Result<Tensor>| r.map(Value::Tensor).or_else(|e| err(p, e.to_string()));
        match name {
            "from_npy" | "from_zarr" => {
                a.check(2, &["path", "chunk", "chunk_size"])?;
                let path = string(a.need(0, "path")?, "path")?;
                let open = |chunk| {
                    if name == "from_npy" {
                        tensor::from_npy(&path, chunk)
                    } else {
                        tensor::from_zarr(&path, chunk)
                    }
                };
                let spec = a.get(1, "chunk").or(a.get(usize::MAX, "chunk_size"));
                match spec {
                    None | Some((Value::None, _)) => wrap(open(None)),
                    spec => {
                        let whole = open(None).or_else(|e| err(p, e.to_string()))?;
                        let chunk = to_chunk(spec, whole.shape(), whole.dtype().itemsize())?;
                        wrap(open(Some(chunk)))
                    }
                }
            }
            "to_npy" => {
                a.check(2, &["x", "path"])?;
                let x = a.tensor(0, "x")?;
                let path = string(a.need(1, "path")?, "path")?;
                wrap(x.to_npy(&path))
            }
            _ => {
                a.check(4, &["x", "path", "chunk", "codec"])?;
                let x = a.tensor(0, "x")?;
                let path = string(a.need(1, "path")?, "path")?;
                let chunk = match a.get(2, "chunk") {
                    None | Some((Value::None, _)) => None,
                    spec => Some(to_chunk(spec, x.shape(), x.dtype().itemsize())?),
                };
                let codec = match a.get(3, "codec") {
                    None => Codec::Zstd { level: 1 },
                    Some((Value::None, _)) => Codec::None,
                    Some(v) => {
                        let pos = v.1;
                        Codec::parse(&string(v, "codec")?).or_else(|e| err(pos, e.to_string()))?
                    }
                };
                wrap(x.to_zarr(&path, chunk, codec))
            }
        }
    }
}
