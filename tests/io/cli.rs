//! The command line's data in and out: `ares run --input/--output` round-trips NumPy's own
//! `.npy` and Zarr files bit for bit, and `ares explain` checks a sink without creating it.

use std::path::Path;

/// Runs `ares run ARGS` in `dir` (its embedded cluster's data root); stdout on success.
fn ares_run(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ares"))
        .arg("run")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ares run {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn python_has(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// numpy → .npy and Zarr (v3 and v2) → `ares run --input ... --output ...` → numpy, bit
/// for bit for each dtype. Needs python3 with numpy (and zarr for the Zarr half); skipped,
/// saying so, without them.
#[test]
fn numpy_files_round_trip_through_the_cli_bit_for_bit() {
    if !python_has("numpy") {
        eprintln!("SKIPPED numpy_files_round_trip_through_the_cli_bit_for_bit: python3 with numpy is not available");
        return;
    }
    let zarr = python_has("zarr");
    if !zarr {
        eprintln!("numpy_files_round_trip_through_the_cli_bit_for_bit: zarr-python is not available: Zarr half skipped");
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let make = r#"
import sys, numpy as np
rng = np.random.default_rng(5)
f = rng.standard_normal((41, 13)) * 1e300
f.flat[:6] = [-0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324]
arrays = {"f": f, "i": rng.integers(-2**63, 2**63 - 1, (17, 9), dtype=np.int64),
          "b": rng.random((23, 5)) < 0.4}
for k, a in arrays.items():
    np.save(k + ".npy", a)
np.save("fortran.npy", np.asfortranarray(f))
if sys.argv[1] == "zarr":
    import zarr
    for k, a in arrays.items():
        z = zarr.create_array(k + "3.zarr", shape=a.shape, chunks=(7, 4), dtype=a.dtype)
        z[:] = a
        z = zarr.open_array(k + "2.zarr", mode="w", shape=a.shape, chunks=(6, 5), dtype=a.dtype, zarr_format=2)
        z[:] = a
"#;
    let check = r#"
import sys, numpy as np
def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == np.float64:
        return np.array_equal(a.view(np.uint64), b.view(np.uint64))
    return np.array_equal(a, b)
bad = []
for k in "fib":
    want = np.load(k + ".npy")
    outs = [k + ".out.npy"] + (["fortran.out.npy"] if k == "f" else [])
    for o in outs:
        if not same(np.load(o), want): bad.append(o)
    if sys.argv[1] == "zarr":
        import zarr
        for o in [k + "3.out.npy", k + "2.out.npy"]:
            if not same(np.load(o), want): bad.append(o)
        if not same(zarr.open_array(k + ".out.zarr")[:], want): bad.append(k + ".out.zarr")
print("BAD", bad) if bad else print("OK")
"#;
    let mode = if zarr { "zarr" } else { "npy" };
    let py = |script: &str| {
        let out = std::process::Command::new("python3")
            .args(["-c", script, mode])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    py(make);
    for k in ["f", "i", "b"] {
        let input = format!("x={k}.npy");
        // Chunks that cut rows, so writers place blocks, not whole rows.
        ares_run(
            d,
            &[
                "--input",
                &input,
                "--expr",
                "rechunk(x, (5, 3))",
                "--output",
                &format!("{k}.out.npy"),
            ],
        );
        if zarr {
            for v in ["3", "2"] {
                let input = format!("x={k}{v}.zarr");
                ares_run(
                    d,
                    &[
                        "--input",
                        &input,
                        "--expr",
                        "x",
                        "--output",
                        &format!("{k}{v}.out.npy"),
                    ],
                );
            }
            let out = ares_run(
                d,
                &[
                    "--input",
                    &input,
                    "--expr",
                    "x",
                    "--output",
                    &format!("{k}.out.zarr"),
                    "--json",
                ],
            );
            assert!(out.contains("\"format\":\"zarr\""), "{out}");
        }
    }
    ares_run(
        d,
        &[
            "--input",
            "x=fortran.npy",
            "--expr",
            "x",
            "--output",
            "fortran.out.npy",
        ],
    );
    assert_eq!(py(check).trim(), "OK");
}

#[test]
fn explain_checks_a_sink_without_creating_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ares"))
        .args(["explain", "--expr", "to_npy(ones(40, chunk=10), 'e.npy')"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("to_npy"));
    assert!(!dir.path().join("e.npy").exists());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ares"))
        .args(["explain", "--expr", "to_npy(ones(4), '../e.npy')"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("outside the data roots"));
}
