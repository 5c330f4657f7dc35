//! Analysis time on realistic generated C (issue: all analyses on 50K
//! lines in under 2 s, growing linearly).
//!
//! For 1K, 10K and 50K-line files from `realistic_c`, loads the file, then
//! runs every analysis with every root of the call graph (a procedure no
//! one calls) as a head with all its real inputs and outputs, and prints
//! the analysis seconds, the seconds per thousand lines, and the number of
//! procedures and analysis points. One line `analysis_50k_seconds=X` for
//! CI logs. Run with `cargo bench --bench analysis`
//! (`AIOLI_BENCH_SIZES=1000,10000` overrides the sizes;
//! `AIOLI_BENCH_REPS=5` runs the analyses five times on each file and
//! reports the fastest, steadier on a busy machine).

use aioli::analysis::{analyze, parse_head};
use aioli::cgen::realistic_c;
use aioli::front::{FrontOptions, load};
use std::time::Instant;

fn measure(lines: usize) -> Result<(usize, f64, usize, usize), String> {
    let text = realistic_c(lines, 42);
    let actual = text.lines().count();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join(format!("bench_{lines}.c"));
    std::fs::write(&path, &text).map_err(|e| e.to_string())?;
    let loaded = load(&path, &FrontOptions::default()).map_err(|(_, d)| d.message)?;
    let program = &loaded.program;
    let graph = program.call_graph();
    let mut called = vec![false; program.procs.len()];
    for callees in &graph {
        for c in callees {
            called[c.index()] = true;
        }
    }
    let mut heads = Vec::new();
    for (id, p) in program.defined_procs() {
        if !called[id.index()] {
            heads.push(parse_head(program, &p.name)?);
        }
    }
    let reps: usize = std::env::var("AIOLI_BENCH_REPS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1)
        .max(1);
    let mut seconds = f64::INFINITY;
    let mut a = None;
    for _ in 0..reps {
        let start = Instant::now();
        let run = analyze(program, &heads);
        seconds = seconds.min(start.elapsed().as_secs_f64());
        a = Some(run);
    }
    let a = a.expect("at least one run");
    let points: usize = a.facts.values().map(|f| f.points.len()).sum();
    Ok((actual, seconds, a.order.len(), points))
}

fn main() {
    aioli::keep_freed_memory();
    let sizes: Vec<usize> = std::env::var("AIOLI_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 50_000]);
    println!(
        "{:>8}  {:>12}  {:>14}  {:>8}  {:>8}",
        "lines", "analysis s", "s per 1K lines", "procs", "points"
    );
    for &size in &sizes {
        match measure(size) {
            Ok((lines, s, procs, points)) => {
                println!(
                    "{lines:>8}  {s:>12.4}  {:>14.4}  {procs:>8}  {points:>8}",
                    s * 1000.0 / lines as f64
                );
                if size == 50_000 {
                    println!("analysis_50k_seconds={s:.4}");
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}
