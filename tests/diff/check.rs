//! Runs a batch: generate programs from consecutive seeds, evaluate each with the reference,
//! NumPy (one process per 2,000 programs) and ares in every mode, and collect every
//! disagreement before failing, so one run gives the whole list.

use super::ares::{ClusterRunner, MODES};
use super::ast::Program;
use super::gen::Gen;
use super::refeval;
use super::value::{judge_mode, judge_numpy, Outcome};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

pub struct Case {
    pub seed: u64,
    pub program: Program,
    pub text: String,
    pub reference: Outcome,
    /// The value follows a documented deviation from NumPy: NumPy is not compared.
    pub deviates: bool,
    /// A data-dependent length is consumed further: the program runs in stages.
    pub staged: bool,
    /// The program has `x[m]` or `unique`.
    pub data_dependent: bool,
}

/// The program of one seed, or `None` when the reference calls it unsupported.
pub fn case(seed: u64) -> Option<Case> {
    let program = Gen::new(seed).program();
    let (r, deviates) = refeval::run_noting_deviations(&program);
    let reference = refeval::outcome(r);
    if matches!(reference, Outcome::Unsupported(_)) {
        return None;
    }
    let text = program.ares();
    let dd = super::refdd::analyse(&program);
    Some(Case {
        seed,
        program,
        text,
        reference,
        deviates,
        staged: dd.staged,
        data_dependent: dd.present,
    })
}

pub struct Report {
    pub programs: usize,
    pub errors_expected: usize,
    pub numpy_checked: usize,
    /// Programs with `x[m]` or `unique`; of them, those that run in stages and those ares
    /// must refuse (an op needs the length while the expression is built).
    pub data_dependent: usize,
    pub staged: usize,
    pub refused: usize,
    pub disagreements: Vec<String>,
    pub summary: Vec<String>,
    pub functions: BTreeMap<String, usize>,
}

fn count_functions(text: &str, counts: &mut BTreeMap<String, usize>) {
    let mut seen = std::collections::BTreeSet::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
        let w = word.trim_start_matches('.');
        let bound_name = w.starts_with('v') && w[1..].chars().all(|c| c.is_ascii_digit());
        if !w.is_empty() && !bound_name && !w.starts_with(|c: char| c.is_ascii_digit()) {
            seen.insert(w.to_string());
        }
    }
    for op in [
        " + ", " - ", " * ", " / ", "**", "@", "==", "!=", "<=", ">=", " < ", " > ", " << ",
        " >> ", "(-", "[", "None]", "::-", ".T",
    ] {
        if text.contains(op) {
            seen.insert(format!("`{}`", op.trim()));
        }
    }
    for w in seen {
        *counts.entry(w).or_default() += 1;
    }
}

/// Checks the programs of seeds `base..` until `n` supported ones have run.
pub fn run(base: u64, n: usize, with_numpy: bool) -> Report {
    // A panic inside ares is caught and reported as a disagreement: one line, no backtrace.
    std::panic::set_hook(Box::new(|info| eprintln!("panic: {info}")));
    let start = Instant::now();
    let mut cases = vec![];
    let mut seed = base;
    while cases.len() < n {
        if let Some(c) = case(seed) {
            cases.push(c);
        }
        seed += 1;
    }
    let mut report = Report {
        programs: cases.len(),
        errors_expected: cases.iter().filter(|c| c.reference.is_error()).count(),
        numpy_checked: 0,
        data_dependent: cases.iter().filter(|c| c.data_dependent).count(),
        staged: cases.iter().filter(|c| c.staged).count(),
        refused: cases
            .iter()
            .filter(|c| matches!(c.reference, Outcome::AresOnly(_)))
            .count(),
        disagreements: vec![],
        summary: vec![],
        functions: BTreeMap::new(),
    };
    // `ARES_DIFF_PRINT=1` prints every program, `=dd` those with `x[m]` or `unique`.
    let print = std::env::var("ARES_DIFF_PRINT").ok().map(|v| v == "dd");
    let mut cluster = ClusterRunner::start();
    for batch in cases.chunks(2000) {
        let numpy = if with_numpy {
            let progs: Vec<Program> = batch.iter().map(|c| c.program.clone()).collect();
            super::numpy::evaluate(&progs)
        } else {
            None
        };
        for (i, c) in batch.iter().enumerate() {
            count_functions(&c.text, &mut report.functions);
            if print.is_some_and(|dd| !dd || c.data_dependent) {
                eprintln!("seed {}: {}\n  reference: {}", c.seed, c.text, c.reference);
            }
            let np = numpy.as_ref().filter(|_| !c.deviates).map(|v| v[i].clone());
            let modes = cluster.all_modes(&c.text);
            let mut why = vec![];
            if let Some(np) = &np {
                report.numpy_checked += 1;
                if let Some(w) = judge_numpy(np, &c.reference) {
                    why.push(w);
                }
            }
            let expected = match (&np, &c.reference) {
                (Some(n @ Outcome::Ok(_)), Outcome::Ok(_)) | (Some(n @ Outcome::Err(_)), _) => {
                    n.clone()
                }
                _ => c.reference.clone(),
            };
            for (m, got) in MODES.iter().zip(&modes) {
                if let Some(w) = judge_mode(m, got, &c.reference, c.staged) {
                    why.push(format!("{m}: {w}"));
                    report
                        .summary
                        .push(format!("`{}` → {m}: {got} → expected {expected}", c.text));
                }
            }
            if why.is_empty() {
                continue;
            }
            let mut s = format!(
                "seed {} (ARES_DIFF_SEED={} ARES_DIFF_COUNT=1)\n  program: {}\n  numpy:\n{}  why: {}\n  reference: {}\n",
                c.seed,
                c.seed,
                c.text,
                c.program.numpy_body(),
                why.join("; "),
                c.reference
            );
            if let Some(np) = &np {
                writeln!(s, "  numpy:     {np}").unwrap();
            }
            for (m, got) in MODES.iter().zip(&modes) {
                writeln!(s, "  {m:<18} {got}").unwrap();
            }
            report.disagreements.push(s);
        }
    }
    eprintln!(
        "differential: {} programs ({} expected errors, {} checked against NumPy; {} with x[mask] or unique, {} of them in stages, {} refused), seeds {base}..{seed}, {:.1}s, {} cluster restarts, {} disagreements",
        report.programs,
        report.errors_expected,
        report.numpy_checked,
        report.data_dependent,
        report.staged,
        report.refused,
        start.elapsed().as_secs_f64(),
        cluster.restarts,
        report.disagreements.len()
    );
    report
}

/// Prints every disagreement and fails if there is any.
pub fn finish(report: &Report) {
    if let Ok(path) = std::env::var("ARES_DIFF_REPORT") {
        let mut s = report.disagreements.join("\n");
        s.push_str("\n# summary\n");
        s.push_str(&report.summary.join("\n"));
        std::fs::write(path, s).expect("write the report");
    }
    if std::env::var("ARES_DIFF_COVERAGE").is_ok() {
        eprintln!(
            "coverage (programs using each name): {:?}",
            report.functions
        );
    }
    for d in &report.disagreements {
        eprintln!("{d}");
    }
    assert!(
        report.disagreements.is_empty(),
        "{} of {} programs disagree (all listed above)",
        report.disagreements.len(),
        report.programs
    );
}
