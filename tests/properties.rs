//! Property: random well-typed C programs (`cgen::random_program`) survive
//! the round trip (`il/split`, `il/sugar`): parsed, validated, printed, the
//! printed C compiles with `-Wall -Wextra -Werror` whenever the original
//! does, printing is idempotent,
//! and the printed program computes the same numbers as the original
//! (`%.17g`, which is exact for doubles). 200 programs per run.
//!
//! The interpreter-versus-cc agreement on random programs is in
//! `tests/interp_vs_cc.rs`.

use aioli::cgen::{GenConfig, random_program};
use aioli::front::{FrontOptions, load};
use proptest::prelude::*;
use std::path::Path;
use std::process::Command;

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

fn run(dir: &Path, program: &Path, main: &Path, name: &str) -> Result<String, String> {
    let exe = dir.join(name);
    let build = Command::new(cc())
        .args(["-std=c99", "-O0", "-w", "-o"])
        .arg(&exe)
        .arg(program)
        .arg(main)
        .arg("-lm")
        .output()
        .map_err(|e| e.to_string())?;
    if !build.status.success() {
        return Err(String::from_utf8_lossy(&build.stderr).into_owned());
    }
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
        Command::new(cc())
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-o"])
            .arg(dir.path().join("check.o"))
            .arg(path)
            .output()
            .unwrap()
    };
    // The generator rarely writes something gcc warns about (a
    // self-comparison, say); the output must be as clean as the input.
    let warnings = clean(&printed_path);
    if !warnings.status.success() && clean(&original).status.success() {
        return Err(format!(
            "printed C has warnings:\n{}",
            String::from_utf8_lossy(&warnings.stderr)
        ));
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
