//! Front-end and back-end throughput on realistic generated C.
//!
//! For 1K, 10K and 50K-line files from `realistic_c`, times
//! preprocess + parse + lower (`front::load` on a temporary file) and
//! printing (`back::print_c`), prints a table, and one line
//! `front_50k_seconds=X` for CI logs to grep.
//!
//! Run with `cargo bench --bench front`. `AIOLI_BENCH_SIZES=1000,10000`
//! overrides the sizes (the grep line is printed for the largest size only
//! when it is 50K).

use aioli::back::print_c;
use aioli::cgen::realistic_c;
use aioli::front::{FrontOptions, load};
use std::time::Instant;

struct Row {
    lines: usize,
    front_seconds: f64,
    print_seconds: f64,
    printed_lines: usize,
}

fn measure(lines: usize) -> Result<Row, String> {
    let text = realistic_c(lines, 42);
    let actual_lines = text.lines().count();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join(format!("bench_{lines}.c"));
    std::fs::write(&path, &text).map_err(|e| e.to_string())?;

    let start = Instant::now();
    let loaded = load(&path, &FrontOptions::default()).map_err(|(sources, d)| {
        format!(
            "front end rejected the {lines}-line file: {}: {}",
            sources.location(d.span),
            d.message
        )
    })?;
    let front_seconds = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let printed = print_c(&loaded.program, &loaded.sources);
    let print_seconds = start.elapsed().as_secs_f64();

    Ok(Row {
        lines: actual_lines,
        front_seconds,
        print_seconds,
        printed_lines: printed.lines().count(),
    })
}

fn main() {
    aioli::keep_freed_memory();
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // special: in both cases run the measurements.
    let sizes: Vec<usize> = std::env::var("AIOLI_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 50_000]);
    println!(
        "{:>8}  {:>12}  {:>14}  {:>12}  {:>14}  {:>8}",
        "lines", "front s", "front lines/s", "print s", "print lines/s", "printed"
    );
    let mut failed = false;
    for &size in &sizes {
        match measure(size) {
            Ok(row) => {
                println!(
                    "{:>8}  {:>12.4}  {:>14.0}  {:>12.4}  {:>14.0}  {:>8}",
                    row.lines,
                    row.front_seconds,
                    row.lines as f64 / row.front_seconds.max(1e-9),
                    row.print_seconds,
                    row.lines as f64 / row.print_seconds.max(1e-9),
                    row.printed_lines,
                );
                if size == 50_000 {
                    println!("front_50k_seconds={:.4}", row.front_seconds);
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
