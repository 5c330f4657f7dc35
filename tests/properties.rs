//! Property: random well-typed C programs (`cgen::random_program`) survive
//! the round trip (`il/split`, `il/sugar`): parsed, validated, printed, the
//! printed C compiles with `-Wall -Wextra -Werror` whenever the original
//! does, printing is idempotent,
//! and the printed program computes the same numbers as the original
//! (`%.17g`, which is exact for doubles). 200 programs per run.
//!
//! The interpreter-versus-cc agreement on random programs is in
//! `tests/interp_vs_cc.rs`.

mod common;

use aioli::cgen::{GenConfig, random_program};
use aioli::front::{FrontOptions, load};
use common::compile;
use proptest::prelude::*;
use std::path::Path;
use std::process::Command;

fn run(dir: &Path, program: &Path, main: &Path, name: &str) -> Result<String, String> {
    let exe = dir.join(name);
    compile(&["-std=c99", "-O0", "-w"], &[program, main], &exe)?;
    let out = Command::new(&exe).output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("{name} exits with {}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn print(path: &Path) -> Result<String, String> {
    let loaded = load(path, &FrontOptions::default())
        .map_err(|(s, d)| aioli::front::diag::render(&s, &d))?;
    let problems = aioli::il::validate::validate(&loaded.program);
    if !problems.is_empty() {
        return Err(format!("invalid IL: {problems:?}"));
    }
    Ok(aioli::back::print_c(&loaded.program, &loaded.sources))
}

fn round_trip(seed: u64) -> Result<(), String> {
    let program = random_program(seed, &GenConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("orig.c");
    std::fs::write(&original, &program.source).unwrap();
    let printed = print(&original)?;
    let printed_path = dir.path().join("printed.c");
    std::fs::write(&printed_path, &printed).unwrap();
    let clean = |path: &Path| {
        let strict = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-c"];
        compile(&strict, &[path], &dir.path().join("check.o"))
    };
    // The generator rarely writes something gcc warns about (a
    // self-comparison, say); the output must be as clean as the input.
    if let Err(warnings) = clean(&printed_path)
        && clean(&original).is_ok()
    {
        return Err(format!("printed C has warnings:\n{warnings}"));
    }
    if print(&printed_path)? != printed {
        return Err("printing is not idempotent".into());
    }
    let main = dir.path().join("main.c");
    std::fs::write(&main, program.c_main(&program.sample_inputs(seed))).unwrap();
    let a = run(dir.path(), &original, &main, "orig")?;
    let b = run(dir.path(), &printed_path, &main, "printed")?;
    if a != b {
        return Err(format!("different numbers:\n{a}\nvs\n{b}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_round_trip(seed in any::<u64>()) {
        let r = round_trip(seed);
        prop_assert!(r.is_ok(), "seed {seed}: {}", r.unwrap_err());
    }
}
