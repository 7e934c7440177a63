//! Floats in human-readable formats (JSON) that survive NaN and infinities.
//!
//! JSON has no NaN or infinity: `serde_json` writes them as `null`, which then fails to read
//! back as a float, so a graph holding `full((), nan)` or `x * inf` could be exported by
//! `ares explain --format graph` or the Python client but not submitted over HTTP. In
//! human-readable formats a non-finite float is written as the string `"NaN"`, `"Infinity"`
//! or `"-Infinity"` (JavaScript's and Python's `json` spellings) and read back from it; a
//! finite float stays a JSON number, and a number of any JSON type is accepted. Binary
//! formats (the cluster's bincode codec) keep the plain `f64`.

use serde::de::{self, Visitor};
use serde::{Deserializer, Serializer};
use std::fmt;

pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if !s.is_human_readable() || x.is_finite() {
        return s.serialize_f64(*x);
    }
    s.serialize_str(if x.is_nan() {
        "NaN"
    } else if *x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    })
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    if d.is_human_readable() {
        d.deserialize_any(FloatOrText)
    } else {
        d.deserialize_f64(FloatOrText)
    }
}

struct FloatOrText;

impl Visitor<'_> for FloatOrText {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, or \"NaN\", \"Infinity\" or \"-Infinity\"")
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        match v {
            "NaN" | "nan" => Ok(f64::NAN),
            "Infinity" | "inf" => Ok(f64::INFINITY),
            "-Infinity" | "-inf" => Ok(f64::NEG_INFINITY),
            other => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::array::Scalar;

    #[test]
    fn non_finite_scalars_round_trip_through_json_as_text() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 1.5, 1e308] {
            let json = serde_json::to_string(&Scalar::F64(x)).unwrap();
            let back: Scalar = serde_json::from_str(&json).unwrap();
            match back {
                Scalar::F64(y) => assert_eq!(x.to_bits(), y.to_bits(), "{json}"),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            serde_json::to_string(&Scalar::F64(f64::NEG_INFINITY)).unwrap(),
            r#"{"f64":"-Infinity"}"#
        );
        let whole: Scalar = serde_json::from_str(r#"{"f64":3}"#).unwrap();
        assert!(matches!(whole, Scalar::F64(x) if x == 3.0));
        assert!(serde_json::from_str::<Scalar>(r#"{"f64":"lots"}"#).is_err());
    }
}
