//! Round trip of every fixture (`il/split`, `il/sugar`, `il/invariants`):
//!
//! 1. the fixture lowers to IL that passes `il::validate`;
//! 2. `parse --emit c` output compiles with `cc -std=c99 -Wall -Wextra
//!    -Werror` (no warnings);
//! 3. printing is idempotent: print ∘ parse ∘ print = print;
//! 4. the printed program, run by the generated driver, prints exactly the
//!    same numbers (`%a`, bit for bit) as the original.
//!
//! The corpus (see `tests/fixtures/front/README.md`) covers every IL section
//! this checks the faithful lowering and printing of: `il/program`,
//! `il/proc`, `il/types`, `il/symbols`, `il/scope`, `il/comments`,
//! `il/expr`, `il/intrinsic`, `il/ref`, `il/decl`, `il/assign`, `il/call`,
//! `il/alloc`, `il/if`, `il/loop`, `il/switch`, `il/jump`, `il/block`.

mod common;

use aioli::check::domain::Domain;
use aioli::check::driver::{compute_inputs, generate_driver};
use aioli::front::{FrontOptions, Loaded, load};
use common::{c_files, compile, config, fixture_dir};
use std::path::Path;
use std::process::Command;

/// Front-end options from the pragma's flags; `-I` is relative to the
/// fixture directory, which is searched too (the printed copy lives
/// elsewhere but keeps the fixture's `#include "..."` lines).
fn options(flags: &[String], dir: &Path) -> FrontOptions {
    let mut o = FrontOptions {
        include_dirs: vec![dir.to_path_buf()],
        defines: Vec::new(),
    };
    for f in flags {
        if let Some(d) = f.strip_prefix("-I") {
            o.include_dirs.push(dir.join(d));
        } else if let Some(def) = f.strip_prefix("-D") {
            o.defines.push(match def.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (def.to_string(), None),
            });
        }
    }
    o
}

fn cc_flags(o: &FrontOptions) -> Vec<String> {
    let mut v: Vec<String> = o
        .include_dirs
        .iter()
        .map(|d| format!("-I{}", d.display()))
        .collect();
    for (n, val) in &o.defines {
        v.push(match val {
            Some(x) => format!("-D{n}={x}"),
            None => format!("-D{n}"),
        });
    }
    v
}

fn load_or_describe(path: &Path, o: &FrontOptions) -> Result<Loaded, String> {
    load(path, o).map_err(|(s, d)| aioli::front::diag::render(&s, &d))
}

/// Compiles `driver` (which includes the program) and returns its stdout.
fn build_and_run(driver: &Path, exe: &Path, flags: &[String]) -> Result<String, String> {
    let mut all = vec!["-std=c99".to_string(), "-O0".into(), "-w".into()];
    all.extend_from_slice(flags);
    compile(&all, &[driver], exe).map_err(|e| format!("does not build:\n{e}"))?;
    let run = Command::new(exe).output().map_err(|e| e.to_string())?;
    if !run.status.success() {
        return Err(format!("exits with {}", run.status));
    }
    Ok(String::from_utf8_lossy(&run.stdout).into_owned())
}

fn round_trip(path: &Path, dir: &Path, work: &Path) -> Result<(), String> {
    let cfg = config(path);
    let opts = options(&cfg.flags, dir);
    let flags = cc_flags(&opts);
    let original = load_or_describe(path, &opts)?;
    let problems = aioli::il::validate::validate(&original.program);
    if !problems.is_empty() {
        return Err(format!("invalid IL: {problems:?}"));
    }
    let printed = aioli::back::print_c(&original.program, &original.sources);
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    let printed_path = work.join(format!("{stem}.c"));
    std::fs::write(&printed_path, &printed).unwrap();

    // The output compiles without a single warning.
    let mut strict: Vec<String> = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-c"]
        .map(String::from)
        .to_vec();
    strict.extend_from_slice(&flags);
    compile(&strict, &[&printed_path], &work.join(format!("{stem}.o")))
        .map_err(|e| format!("printed C does not compile cleanly:\n{e}"))?;

    // Printing is idempotent.
    let reloaded = load_or_describe(&printed_path, &opts)
        .map_err(|e| format!("printed C does not re-parse:\n{e}"))?;
    let reprinted = aioli::back::print_c(&reloaded.program, &reloaded.sources);
    if reprinted != printed {
        let line = printed
            .lines()
            .zip(reprinted.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(format!(
            "printing is not idempotent; first difference at line {}:\n  {}\n  {}",
            line + 1,
            printed.lines().nth(line).unwrap_or(""),
            reprinted.lines().nth(line).unwrap_or("")
        ));
    }

    // Same numbers, bit for bit.
    let domain = Domain::parse(&cfg.domain).map_err(|e| e.to_string())?;
    let inputs =
        compute_inputs(&original.program, &cfg.head, &domain, 7).map_err(|e| e.to_string())?;
    let mut outputs = Vec::new();
    for (tag, included) in [
        ("orig", std::fs::canonicalize(path).unwrap()),
        ("printed", printed_path),
    ] {
        let driver_text =
            generate_driver(&original.program, &inputs, &included).map_err(|e| e.to_string())?;
        let driver = work.join(format!("{stem}_{tag}_main.c"));
        std::fs::write(&driver, driver_text).unwrap();
        let exe = work.join(format!("{stem}_{tag}"));
        outputs.push(build_and_run(&driver, &exe, &flags).map_err(|e| format!("{tag}: {e}"))?);
    }
    if outputs[0] != outputs[1] {
        return Err(format!(
            "printed program computes different numbers:\n{}\nvs\n{}",
            outputs[0], outputs[1]
        ));
    }
    if outputs[0].trim().is_empty() {
        return Err("the driver printed nothing".into());
    }
    Ok(())
}

#[test]
fn every_fixture_round_trips() {
    let (dir, files) = (fixture_dir("front"), c_files("front"));
    assert!(files.len() >= 30, "only {} fixtures", files.len());
    let work = tempfile::tempdir().unwrap();
    let failures: Vec<String> = files
        .iter()
        .filter_map(|p| {
            round_trip(p, &dir, work.path())
                .err()
                .map(|e| format!("{}: {e}", p.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} fixtures fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

/// The bundled example of the README round-trips too.
#[test]
fn bundled_example_round_trips() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/heat.c");
    let loaded = load_or_describe(&path, &FrontOptions::default()).unwrap();
    let printed = aioli::back::print_c(&loaded.program, &loaded.sources);
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("heat.c");
    std::fs::write(&copy, &printed).unwrap();
    let again = load_or_describe(&copy, &FrontOptions::default()).unwrap();
    assert_eq!(
        aioli::back::print_c(&again.program, &again.sources),
        printed
    );
    assert!(printed.contains("/* swap the buffers instead of copying */"));
    assert!(
        printed.contains("One-dimensional heat equation"),
        "the file's opening comment is lost:\n{printed}"
    );
}
