//! In-process fuzzing of what reads a data file's metadata: the bounded `.npy` header parser
//! (`io/npy_header.rs`) and the Zarr metadata reader (`zarr.json` v3, `.zarray` v2, read
//! through `io/zarr_store.rs` and parsed by `zarrs`, opened by `io::source_meta` exactly as
//! `from_zarr` does). CI runs 10^5 `.npy` headers and 2·10^4 Zarr documents in a debug build;
//! `cargo test --release --test fuzz_files -- --ignored` runs 10^6 of each. Inputs are random
//! bytes and mutations of what NumPy and Zarr writers produce (byte flips, cuts, inserted
//! brackets, quotes and digits, huge numbers, deep nesting, JSON values swapped for others).
//! Every input must be accepted or refused with an error, never panic, and take under
//! [`BOUND`]. Each input has its own seed, printed when it fails, so one input reproduces.

use ares_core::io::{self, npy_header, roots, Codec, Format};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Longest any one input may take to parse (checked again once before failing, so a
/// scheduler pause in a busy CI run is not a finding).
const BOUND: Duration = Duration::from_millis(50);

/// Runs `check` on inputs `0..n`, each made from its own seed; names the seed on a panic or
/// a slow input.
fn fuzz<T>(what: &str, base: u64, n: u64, make: impl Fn(u64) -> T, check: impl Fn(&T) -> bool) {
    let start = Instant::now();
    let (mut slowest, mut accepted) = (Duration::ZERO, 0u64);
    for i in 0..n {
        let seed = base.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i;
        let input = make(seed);
        let t = Instant::now();
        match catch_unwind(AssertUnwindSafe(|| check(&input))) {
            Ok(ok) => accepted += ok as u64,
            Err(p) => {
                eprintln!("{what}: input with seed {seed:#x} panicked");
                std::panic::resume_unwind(p);
            }
        }
        let mut took = t.elapsed();
        if took > BOUND {
            let t = Instant::now();
            let _ = check(&input);
            took = t.elapsed();
            assert!(
                took <= BOUND,
                "{what}: input with seed {seed:#x} took {took:?} (twice over {BOUND:?})"
            );
        }
        slowest = slowest.max(took);
    }
    eprintln!(
        "{what}: {n} inputs ({accepted} accepted) in {:.2} s, slowest {slowest:?}, none panicked",
        start.elapsed().as_secs_f64()
    );
}

/// Pieces inserted by the mutators: structure, quotes, numbers at and past every limit.
const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "'",
    "\"",
    ",",
    ":",
    " ",
    "\n",
    "\\",
    "0",
    "1",
    "9",
    "-1",
    "+",
    "1e308",
    "-0",
    "1.5",
    "NaN",
    "inf",
    "null",
    "True",
    "False",
    "true",
    "\"\"",
    "''",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "99999999999999999999999999999999",
    "\u{e9}",
    "\u{0}",
];

fn pick<'a, T>(rng: &mut Xoshiro256PlusPlus, xs: &'a [T]) -> &'a T {
    &xs[rng.gen_range(0..xs.len())]
}

/// One byte-level mutation of `seed_doc`, or (one time in eight) random bytes.
fn mutate_bytes(rng: &mut Xoshiro256PlusPlus, seed_doc: &[u8]) -> Vec<u8> {
    if rng.gen_range(0..8) == 0 {
        let mut b = vec![0u8; rng.gen_range(0..400)];
        rng.fill(&mut b[..]);
        return b;
    }
    let mut b = seed_doc.to_vec();
    for _ in 0..rng.gen_range(1..4) {
        let at = rng.gen_range(0..=b.len());
        match rng.gen_range(0..7) {
            0 if at < b.len() => b[at] = rng.gen(),
            1 => b.truncate(at),
            2 => {
                let t = pick(rng, TOKENS).as_bytes();
                b.splice(at..at, t.iter().copied());
            }
            3 if at < b.len() => {
                let end = rng.gen_range(at..=b.len());
                b.drain(at..end);
            }
            4 => {
                // Deep nesting: an opener repeated up to 12,000 times (past the 10,000-byte
                // header bound), perhaps closed.
                let (o, c) = *pick(rng, &[(b'(', b')'), (b'[', b']'), (b'{', b'}')]);
                let depth = rng.gen_range(1..12_000);
                let mut nest = vec![o; depth];
                if rng.gen() {
                    nest.extend(std::iter::repeat_n(c, depth));
                }
                b.splice(at..at, nest);
            }
            5 => {
                // A huge number: a long run of digits.
                let digits = rng.gen_range(20..5_000);
                b.splice(at..at, (0..digits).map(|k| b'0' + (k % 10) as u8));
            }
            _ if at < b.len() => b[at] ^= 1 << rng.gen_range(0..8),
            _ => b.push(rng.gen()),
        }
    }
    b
}

// ---------------------------------------------------------------------------------------
// .npy headers

/// Header dicts as NumPy writes them (the bytes after the preamble, padding included).
fn npy_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (descr, fortran, shape) in [
        ("<f8", "False", "(3, 4)"),
        ("<f4", "True", "(1000000, 2, 3)"),
        ("|b1", "False", "(7,)"),
        ("<i8", "False", "()"),
        (">u2", "False", "(0, 5)"),
        ("<c16", "True", "(2, 2, 2, 2, 2, 2, 2, 2)"),
    ] {
        let dict =
            format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}");
        // NumPy pads with spaces to a multiple of 64 bytes with the preamble, then '\n'.
        let pad = 64 - (10 + dict.len() + 1) % 64;
        out.push(format!("{dict}{}\n", " ".repeat(pad % 64)).into_bytes());
    }
    out
}

fn npy_input(seed: u64, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let s = pick(&mut rng, seeds).clone();
    mutate_bytes(&mut rng, &s)
}

fn npy_check(bytes: &[u8]) -> bool {
    match npy_header::parse(bytes) {
        Ok(_) => true,
        Err(e) => {
            assert!(e.to_string().starts_with("header "), "{e}");
            false
        }
    }
}

fn fuzz_npy(n: u64) {
    let seeds = npy_seeds();
    for s in &seeds {
        npy_header::parse(s).unwrap();
    }
    fuzz(
        "npy header",
        1,
        n,
        |s| npy_input(s, &seeds),
        |b| npy_check(b),
    );
}

#[test]
fn npy_headers_never_panic_and_parse_in_one_pass() {
    fuzz_npy(100_000);
}

#[test]
#[ignore = "10^6 inputs: run with --release --ignored"]
fn npy_headers_never_panic_a_million() {
    fuzz_npy(1_000_000);
}

// ---------------------------------------------------------------------------------------
// Zarr metadata

fn v3_seeds() -> Vec<Value> {
    let chunk_grid = |c: Value| json!({"name": "regular", "configuration": {"chunk_shape": c}});
    let base = |shape: Value, chunk: Value, dtype: &str, fill: Value, codecs: Value| {
        json!({
            "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
            "chunk_grid": chunk_grid(chunk),
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": {}
        })
    };
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    vec![
        base(
            json!([10, 20]),
            json!([5, 10]),
            "float64",
            json!(0.0),
            json!([bytes]),
        ),
        base(
            json!([100]),
            json!([7]),
            "int32",
            json!(0),
            json!([bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
        ),
        base(
            json!([4, 4]),
            json!([4, 4]),
            "float32",
            json!("NaN"),
            json!([{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2, 2], "codecs": [bytes],
                "index_codecs": [bytes, {"name": "crc32c"}], "index_location": "end"}}]),
        ),
        base(json!([]), json!([]), "bool", json!(false), json!([bytes])),
    ]
}

fn v2_seeds() -> Vec<Value> {
    vec![
        json!({"zarr_format": 2, "shape": [10, 20], "chunks": [5, 10], "dtype": "<f8",
               "compressor": null, "fill_value": 0.0, "order": "C", "filters": null,
               "dimension_separator": "."}),
        json!({"zarr_format": 2, "shape": [1000], "chunks": [64], "dtype": "<i4",
               "compressor": {"id": "zstd", "level": 1}, "fill_value": 0, "order": "C",
               "filters": null}),
        json!({"zarr_format": 2, "shape": [3, 3, 3], "chunks": [1, 2, 3], "dtype": "|b1",
               "compressor": {"id": "gzip", "level": 1}, "fill_value": false, "order": "C",
               "filters": null, "dimension_separator": "/"}),
    ]
}

/// Values swapped into a document: wrong types, and numbers at and past every limit.
fn hostile_value(rng: &mut Xoshiro256PlusPlus) -> Value {
    let big = |rng: &mut Xoshiro256PlusPlus| {
        pick(
            rng,
            &[
                json!(0),
                json!(-1),
                json!(1),
                json!(u64::MAX),
                json!(i64::MIN),
                json!(1u64 << 32),
                json!(1u64 << 62),
                json!(1e308),
                json!(0.5),
            ],
        )
        .clone()
    };
    match rng.gen_range(0..8) {
        0 => big(rng),
        1 => {
            let n = rng.gen_range(0..70);
            Value::Array((0..n).map(|_| big(rng)).collect())
        }
        2 => json!(pick(rng, TOKENS).to_string()),
        3 => Value::Null,
        4 => json!({}),
        5 => json!([]),
        6 => {
            let mut v = json!(1);
            for _ in 0..rng.gen_range(1..100) {
                v = json!([v]);
            }
            v
        }
        _ => json!(*pick(
            rng,
            &[
                "float64",
                "int8",
                "uint64",
                "bool",
                "complex128",
                "r16",
                "string",
                "<f8",
                "|O",
                ""
            ]
        )),
    }
}

/// Replaces, deletes or adds one value somewhere in `v`.
fn mutate_value(rng: &mut Xoshiro256PlusPlus, v: &mut Value) {
    match v {
        Value::Object(m) if !m.is_empty() && rng.gen_range(0..4) != 0 => {
            let k = m.keys().nth(rng.gen_range(0..m.len())).unwrap().clone();
            match rng.gen_range(0..6) {
                0 => {
                    m.remove(&k);
                }
                1 => {
                    m.insert(k, hostile_value(rng));
                }
                2 => {
                    m.insert(format!("{k}_x"), hostile_value(rng));
                }
                _ => mutate_value(rng, m.get_mut(&k).unwrap()),
            }
        }
        Value::Array(a) if !a.is_empty() && rng.gen_range(0..4) != 0 => {
            let i = rng.gen_range(0..a.len());
            match rng.gen_range(0..5) {
                0 => {
                    a.remove(i);
                }
                1 => a.push(hostile_value(rng)),
                _ => mutate_value(rng, &mut a[i]),
            }
        }
        _ => *v = hostile_value(rng),
    }
}

fn zarr_input(seed: u64, v3: &[Value], v2: &[Value]) -> (bool, Vec<u8>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let is_v3 = rng.gen();
    let mut doc = pick(&mut rng, if is_v3 { v3 } else { v2 }).clone();
    let bytes = if rng.gen_range(0..3) == 0 {
        mutate_bytes(&mut rng, doc.to_string().as_bytes())
    } else {
        for _ in 0..rng.gen_range(1..4) {
            mutate_value(&mut rng, &mut doc);
        }
        doc.to_string().into_bytes()
    };
    (is_v3, bytes)
}

/// A data root with a v3 store `a3.zarr` and a v2 store `a2.zarr`, made the global roots.
fn zarr_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("a3.zarr")).unwrap();
    std::fs::create_dir(dir.path().join("a2.zarr")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    roots::set_global(roots::DataRoots::new(&[root]).unwrap());
    dir
}

/// Writes the document into its store (not timed: the bound is on reading it).
fn zarr_write(root: &std::path::Path, (is_v3, bytes): (bool, Vec<u8>)) -> &'static str {
    let (store, name) = if is_v3 {
        ("a3.zarr", "zarr.json")
    } else {
        ("a2.zarr", ".zarray")
    };
    std::fs::write(root.join(store).join(name), bytes).unwrap();
    store
}

/// Opens `store` as `from_zarr` does.
fn zarr_check(store: &str) -> bool {
    let format = Format::Zarr { codec: Codec::None };
    if let Ok((_, meta)) = io::source_meta(format, store) {
        // What is accepted is self-consistent: one chunk extent per dimension.
        assert_eq!(meta.chunk.len(), meta.shape.len());
        return true;
    }
    false
}

fn fuzz_zarr(n: u64) {
    let dir = zarr_root();
    let root = dir.path().canonicalize().unwrap();
    let (v3, v2) = (v3_seeds(), v2_seeds());
    for (is_v3, seeds) in [(true, &v3), (false, &v2)] {
        for s in seeds.iter() {
            let store = zarr_write(&root, (is_v3, s.to_string().into_bytes()));
            io::source_meta(Format::Zarr { codec: Codec::None }, store)
                .unwrap_or_else(|e| panic!("seed document {s} refused: {e}"));
        }
    }
    fuzz(
        "zarr metadata",
        2,
        n,
        |s| zarr_write(&root, zarr_input(s, &v3, &v2)),
        |store| zarr_check(store),
    );
}

#[test]
fn zarr_metadata_never_panics_and_reads_quickly() {
    fuzz_zarr(20_000);
}

#[test]
#[ignore = "10^6 inputs: run with --release --ignored"]
fn zarr_metadata_never_panics_a_million() {
    fuzz_zarr(1_000_000);
}
