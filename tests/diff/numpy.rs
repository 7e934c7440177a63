//! The NumPy oracle: renders programs as Python functions and evaluates a whole batch in one
//! `python3` process, which prints one JSON line per program (dtype, shape, flat values, or
//! the exception). It validates the reference evaluator; it is skipped, with a note, where
//! Python or NumPy >= 2 is missing.

use super::ast::Program;
use super::value::{Outcome, Res, Vals, DT};
use std::fmt::Write as _;
use std::process::Command;

const PRELUDE: &str = r#"
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
np.seterr(all="ignore")

def enc(r):
    a = np.asarray(r)
    dt = str(a.dtype)
    if dt == "float64":
        vals = [repr(float(x)) for x in a.ravel()]
    elif dt in ("int64", "bool"):
        vals = a.ravel().tolist()
    else:
        vals = []
    return {"dtype": dt, "shape": list(a.shape), "values": vals}

progs = []
"#;

const MAIN: &str = r#"
for f in progs:
    try:
        out = enc(f())
    except Exception as e:
        out = {"error": type(e).__name__ + ": " + str(e)}
    print(json.dumps(out), flush=True)
"#;

/// Whether `python3` with NumPy 2 is here; prints why not when it is not.
pub fn available() -> bool {
    let out = Command::new("python3")
        .args([
            "-c",
            "import numpy, sys; sys.exit(0 if int(numpy.__version__.split('.')[0]) >= 2 else 1)",
        ])
        .output();
    let ok = matches!(&out, Ok(o) if o.status.success());
    if !ok {
        eprintln!("note: python3 with numpy>=2 is not available: skipping the NumPy oracle");
    }
    ok
}

pub fn script(programs: &[Program]) -> String {
    let mut s = PRELUDE.to_string();
    for (i, p) in programs.iter().enumerate() {
        write!(s, "def p{i}():\n{}progs.append(p{i})\n", p.numpy_body()).unwrap();
    }
    s + MAIN
}

fn parse(line: &str) -> Outcome {
    let v: serde_json::Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Outcome::Unsupported(format!("bad oracle line {line:?}: {e}")),
    };
    if let Some(e) = v.get("error") {
        return Outcome::Err(e.as_str().unwrap_or_default().to_string());
    }
    let dtype = v["dtype"].as_str().unwrap_or_default();
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let values = v["values"].as_array().unwrap();
    let vals = match DT::parse(dtype) {
        Some(DT::Bool) => Vals::B(values.iter().map(|x| x.as_bool().unwrap()).collect()),
        Some(DT::I64) => Vals::I(values.iter().map(|x| x.as_i64().unwrap()).collect()),
        Some(DT::F64) => Vals::F(
            values
                .iter()
                .map(|x| x.as_str().unwrap().parse::<f64>().unwrap())
                .collect(),
        ),
        None => return Outcome::Unsupported(format!("NumPy dtype {dtype}")),
    };
    Outcome::Ok(Res { shape, vals })
}

/// NumPy's outcome for every program, in order; `None` if the process failed.
pub fn evaluate(programs: &[Program]) -> Option<Vec<Outcome>> {
    let dir = tempfile::tempdir().ok()?;
    let path = dir.path().join("oracle.py");
    std::fs::write(&path, script(programs)).ok()?;
    let out = Command::new("python3").arg(&path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let results: Vec<Outcome> = text.lines().map(parse).collect();
    if results.len() != programs.len() {
        eprintln!(
            "NumPy oracle printed {} results for {} programs: {}",
            results.len(),
            programs.len(),
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    Some(results)
}
