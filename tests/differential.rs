//! The differential test of issue 14: random programs over the whole expression language,
//! run by ares in every mode (embedded cluster, `--no-fuse`, `--local`) and compared with an
//! independent whole-array reference and, where Python has NumPy 2, with NumPy itself.
//! See TESTING.md for coverage and reproduction (`ARES_DIFF_SEED`, `ARES_DIFF_COUNT`).

mod diff;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.parse().expect(name))
}

fn run(default_count: u64) {
    let seed = env_u64("ARES_DIFF_SEED").unwrap_or(1);
    let count = env_u64("ARES_DIFF_COUNT").unwrap_or(default_count);
    let numpy = diff::numpy::available();
    let report = diff::check::run(seed, count as usize, numpy);
    diff::check::finish(&report);
}

/// 2,000 programs: what CI runs.
#[test]
fn random_programs_agree_with_the_reference_and_numpy() {
    run(2000);
}

/// 10^5 programs: `cargo test --release --test differential -- --ignored`.
#[test]
#[ignore]
fn a_hundred_thousand_random_programs() {
    if std::env::var("ARES_DIFF_SEED").is_err() {
        std::env::set_var("ARES_DIFF_SEED", "1000000");
    }
    run(100_000);
}
