//! Printing results: a scalar as a plain number, an array as its shape plus a numpy-style
//! summary (first and last three elements when it is long), or JSON. A complex element is
//! printed as Python prints one (`(1+2j)`), and in JSON as the pair `[re, im]`.

use crate::array::{fmt_shape, ArrayData, Scalar};
use serde_json::{json, Value};

/// Largest array `--json` prints in full.
pub const JSON_FULL_LIMIT: usize = 100_000;

pub fn fmt_scalar(s: Scalar) -> String {
    s.to_string()
}

fn json_scalar(s: Scalar) -> Value {
    match s {
        Scalar::Bool(b) => json!(b),
        Scalar::I64(i) => json!(i),
        Scalar::F64(x) if x.is_finite() => json!(x),
        Scalar::F64(x) => json!(x.to_string()),
    }
}

/// One element to print: a number of the language, or a complex number's parts.
#[derive(Clone, Copy)]
enum Item {
    Real(Scalar),
    Complex(f64, f64),
}

fn shortest32(v: f32) -> f64 {
    format!("{v:?}").parse::<f64>().unwrap_or(v as f64)
}

/// Python's `repr` of a complex number's part: `1`, `0.5`, `inf`, `nan`.
fn part(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else if x == x.trunc() && x.abs() < 1e16 {
        if x == 0.0 && x.is_sign_negative() {
            "-0".into()
        } else {
            format!("{}", x as i64)
        }
    } else {
        format!("{x:?}")
    }
}

fn fmt_item(it: Item) -> String {
    match it {
        Item::Real(s) => fmt_scalar(s),
        Item::Complex(re, im) => {
            let sign = if im.is_sign_negative() && !im.is_nan() {
                "-"
            } else {
                "+"
            };
            format!("({}{sign}{}j)", part(re), part(im.abs()))
        }
    }
}

fn json_item(it: Item) -> Value {
    match it {
        Item::Real(s) => json_scalar(s),
        Item::Complex(re, im) => {
            json!([json_scalar(Scalar::F64(re)), json_scalar(Scalar::F64(im))])
        }
    }
}

/// Element `i` for printing: a float32 as the shortest decimal that reads back as the same
/// float32 (`0.33333334`, as NumPy prints it), not as the float64 it widens to.
fn item(a: &ArrayData, i: usize) -> Option<Item> {
    match a {
        ArrayData::F32(x) => x
            .iter()
            .nth(i)
            .map(|v| Item::Real(Scalar::F64(shortest32(*v)))),
        ArrayData::C64(x) => x
            .iter()
            .nth(i)
            .map(|v| Item::Complex(shortest32(v.re), shortest32(v.im))),
        ArrayData::C128(x) => x.iter().nth(i).map(|v| Item::Complex(v.re, v.im)),
        _ => a.get_flat(i).map(Item::Real),
    }
}

fn items(a: &ArrayData) -> Vec<Item> {
    (0..a.len()).filter_map(|i| item(a, i)).collect()
}

/// `[0.1, 0.2, 0.3, ..., 0.8, 0.9, 1.0]` (flattened in C order).
pub fn summary(a: &ArrayData) -> String {
    let n = a.len();
    let show = |range: std::ops::Range<usize>| -> Vec<String> {
        range.filter_map(|i| item(a, i)).map(fmt_item).collect()
    };
    if n <= 6 {
        format!("[{}]", show(0..n).join(", "))
    } else {
        format!(
            "[{}, ..., {}]",
            show(0..3).join(", "),
            show(n - 3..n).join(", ")
        )
    }
}

/// Text form: a scalar alone, an array as shape, dtype and summary.
pub fn text(a: &ArrayData) -> String {
    if a.shape().is_empty() {
        return item(a, 0).map(fmt_item).unwrap_or_default();
    }
    format!(
        "array(shape={}, dtype={}) {}",
        fmt_shape(a.shape()),
        a.dtype(),
        summary(a)
    )
}

/// JSON `result`: a number, a nested list up to [`JSON_FULL_LIMIT`] elements, else the summary.
pub fn json_result(a: &ArrayData) -> Value {
    if !a.shape().is_empty() && a.len() > JSON_FULL_LIMIT {
        return json!(summary(a));
    }
    json_nested(a)
}

/// The whole array as nested JSON lists (a scalar as a number).
pub fn json_nested(a: &ArrayData) -> Value {
    fn nest(flat: &[Item], shape: &[usize]) -> Value {
        match shape {
            [] => flat.first().map_or(Value::Null, |s| json_item(*s)),
            [n] => Value::Array(flat[..*n].iter().map(|s| json_item(*s)).collect()),
            [n, rest @ ..] => {
                let step: usize = rest.iter().product();
                Value::Array((0..*n).map(|i| nest(&flat[i * step..], rest)).collect())
            }
        }
    }
    nest(&items(a), a.shape())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    #[test]
    fn summaries_look_like_numpy() {
        let a = ArrayData::I64(ArrayD::from_shape_vec(IxDyn(&[10]), (0..10).collect()).unwrap());
        assert_eq!(
            text(&a),
            "array(shape=(10,), dtype=int64) [0, 1, 2, ..., 7, 8, 9]"
        );
        let s = ArrayData::F64(ArrayD::from_elem(IxDyn(&[]), 2.5));
        assert_eq!(text(&s), "2.5");
        let m = ArrayData::Bool(ArrayD::from_elem(IxDyn(&[2, 2]), true));
        assert_eq!(json_result(&m), json!([[true, true], [true, true]]));
    }

    #[test]
    fn complex_elements_print_as_python_and_pair_in_json() {
        let z = ArrayData::C128(
            ArrayD::from_shape_vec(
                IxDyn(&[3]),
                vec![
                    crate::array::Complex64::new(1.0, 2.0),
                    crate::array::Complex64::new(0.5, -0.25),
                    crate::array::Complex64::new(f64::NAN, f64::INFINITY),
                ],
            )
            .unwrap(),
        );
        assert_eq!(summary(&z), "[(1+2j), (0.5-0.25j), (nan+infj)]");
        assert_eq!(
            json_result(&z),
            json!([[1.0, 2.0], [0.5, -0.25], ["NaN", "inf"]])
        );
    }
}
