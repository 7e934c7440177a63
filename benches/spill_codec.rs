//! Spill codec: LZ4 (lz4_flex) against zstd level 1 on 8 MiB float64 chunks (random,
//! constant, a ramp, a few distinct values), compress and decompress, MB/s and ratio.
//! `cargo bench --bench spill_codec`; figures in BENCHMARKS.md ("Spill codec").

use rand::{Rng, SeedableRng};
use std::time::Instant;

fn bytes_of(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn time<T>(reps: u32, mut f: impl FnMut() -> T) -> (f64, T) {
    let start = Instant::now();
    let mut out = f();
    for _ in 1..reps {
        out = f();
    }
    (start.elapsed().as_secs_f64() / reps as f64, out)
}

fn main() {
    let n = 1 << 20;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    let chunks = [
        (
            "random",
            bytes_of(&(0..n).map(|_| rng.gen::<f64>()).collect::<Vec<_>>()),
        ),
        ("ones", bytes_of(&vec![1.0; n])),
        (
            "ramp",
            bytes_of(&(0..n).map(|i| i as f64 * 0.5).collect::<Vec<_>>()),
        ),
        (
            "i % 1000",
            bytes_of(&(0..n).map(|i| (i % 1000) as f64).collect::<Vec<_>>()),
        ),
    ];
    for (name, data) in &chunks {
        let mb = data.len() as f64 / 1e6;
        let (c, packed) = time(10, || lz4_flex::compress_prepend_size(data));
        let (d, _) = time(10, || lz4_flex::decompress_size_prepended(&packed).unwrap());
        let ratio = data.len() as f64 / packed.len() as f64;
        println!(
            "{name:9} lz4_flex ratio {ratio:8.3} compress {:6.0} MB/s decompress {:6.0} MB/s",
            mb / c,
            mb / d
        );
        let (c, packed) = time(10, || zstd::bulk::compress(data, 1).unwrap());
        let (d, _) = time(10, || zstd::bulk::decompress(&packed, data.len()).unwrap());
        let ratio = data.len() as f64 / packed.len() as f64;
        println!(
            "{name:9} zstd-1   ratio {ratio:8.3} compress {:6.0} MB/s decompress {:6.0} MB/s",
            mb / c,
            mb / d
        );
    }
}
