//! The tangent corpus, `tests/fixtures/tangent/`: small C programs, one
//! construct each, that the tangent mode is to be validated on. This test
//! only checks that the corpus itself is sound, nothing about derivatives:
//! for every fixture,
//!
//! - the front end accepts it, through the library and through
//!   `aioli parse FILE --emit c`;
//! - its first line is a valid `// aioli:` pragma whose head names a
//!   function of the file with valid dependents and independents, and whose
//!   domain parses and names every parameter of the head (and nothing else);
//! - it compiles with `cc -Wall -Wextra -Werror -c`, both in the compiler's
//!   default dialect and with `-std=c99 -pedantic`;
//! - the check driver (`check::driver`) calls its head on inputs drawn in
//!   the domain, and every printed output is finite;
//! - `README.md` lists it.

mod common;

use aioli::analysis::parse_head;
use aioli::check::domain::Domain;
use aioli::check::driver::{ScalarKind, compute_inputs, describe_outputs, generate_driver};
use aioli::front::{self, Loaded};
use common::{c_files, cc, cc_flags, compile, config, fixture_dir, front_options};
use std::path::Path;
use std::process::Command;

const KIND: &str = "tangent";

/// Seeds of the driver runs: each draws different inputs in the domain.
const SEEDS: [u64; 2] = [1, 2];

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

fn load(path: &Path) -> Result<Loaded, String> {
    let cfg = config(path);
    front::load(path, &front_options(&cfg.flags, &fixture_dir(KIND))).map_err(|(sources, d)| {
        format!(
            "front end rejects it: {}: {}",
            sources.location(d.span),
            d.message
        )
    })
}

/// Runs `check` on every fixture; fails listing every fixture's problem.
fn for_each_fixture(what: &str, check: impl Fn(&Path) -> Result<(), String>) {
    let files = c_files(KIND);
    assert!(
        files.len() >= 30,
        "expected a corpus of about 30 fixtures, found {}",
        files.len()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|p| check(p).err().map(|e| format!("{}.c: {e}", stem(p))))
        .collect();
    assert!(
        failures.is_empty(),
        "{what}: {} of {} fixtures fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn the_front_end_accepts_every_fixture() {
    for_each_fixture("front end", |path| {
        load(path)?;
        let out = Command::new(env!("CARGO_BIN_EXE_aioli"))
            .arg("parse")
            .arg(path)
            .args(["--emit", "c"])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "aioli parse --emit c exits with {}:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        if out.stdout.is_empty() {
            return Err("aioli parse --emit c prints nothing".to_string());
        }
        Ok(())
    });
}

#[test]
fn every_pragma_has_a_valid_head_and_a_domain_covering_every_parameter() {
    for_each_fixture("pragma", |path| {
        let cfg = config(path);
        let loaded = load(path)?;
        let program = &loaded.program;
        if !cfg.head.contains('(') {
            return Err(format!(
                "head '{}' should list its dependents and independents, as in 'f(y)/(x)'",
                cfg.head
            ));
        }
        let head = parse_head(program, &cfg.head)?;
        if head.dependents.is_empty() || head.independents.is_empty() {
            return Err(format!(
                "head '{}' has no dependent or no independent",
                cfg.head
            ));
        }
        let domain = Domain::parse(&cfg.domain).map_err(|e| format!("domain: {e}"))?;
        let proc = program.proc(head.proc);
        let params: Vec<&str> = proc
            .params
            .iter()
            .map(|&s| program.sym(s).name.as_str())
            .collect();
        for name in &params {
            if domain.entries_for(name).next().is_none() {
                return Err(format!(
                    "domain '{}' does not give parameter '{name}' of '{}'",
                    cfg.domain, proc.name
                ));
            }
        }
        if let Some(e) = domain
            .entries
            .iter()
            .find(|e| !params.contains(&e.param.as_str()))
        {
            return Err(format!(
                "domain entry '{}' names no parameter of '{}'",
                e.key(),
                proc.name
            ));
        }
        // Struct fields, array sizes, integer values: the driver's own
        // validation of the domain against the parameter types.
        compute_inputs(program, &proc.name, &domain, 1).map_err(|e| format!("inputs: {e}"))?;
        Ok(())
    });
}

#[test]
fn every_fixture_compiles_without_warnings() {
    let work = tempfile::tempdir().unwrap();
    for_each_fixture("cc -Wall -Wextra -Werror", |path| {
        let cfg = config(path);
        let dir = fixture_dir(KIND);
        let object = work.path().join(format!("{}.o", stem(path)));
        for dialect in [&[][..], &["-std=c99", "-pedantic"][..]] {
            let mut flags: Vec<String> = dialect.iter().map(|s| s.to_string()).collect();
            flags.extend(["-Wall", "-Wextra", "-Werror", "-c"].map(String::from));
            flags.extend(cc_flags(&cfg.flags, &dir));
            compile(&flags, &[path], &object)
                .map_err(|e| format!("{} {}:\n{e}", cc(), flags.join(" ")))?;
        }
        Ok(())
    });
}

/// The value of a line printed by `printf("%a")`, `None` when it is not a
/// finite number (`inf`, `nan`, garbage).
fn hex_float(text: &str) -> Option<f64> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let rest = rest.strip_prefix("0x")?;
    let (mantissa, exponent) = rest.split_once('p')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut value = u64::from_str_radix(whole, 16).ok()? as f64;
    let mut scale = 1.0 / 16.0;
    for c in fraction.chars() {
        value += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    let value = value * 2f64.powi(exponent);
    value
        .is_finite()
        .then_some(if negative { -value } else { value })
}

/// Builds and runs the driver of one fixture for one seed.
fn run_driver(path: &Path, seed: u64, work: &Path) -> Result<(), String> {
    let cfg = config(path);
    let loaded = load(path)?;
    let program = &loaded.program;
    let head = parse_head(program, &cfg.head)?;
    let name = program.proc(head.proc).name.clone();
    let domain = Domain::parse(&cfg.domain).map_err(|e| format!("domain: {e}"))?;
    let inputs =
        compute_inputs(program, &name, &domain, seed).map_err(|e| format!("inputs: {e}"))?;
    let absolute = std::fs::canonicalize(path).unwrap();
    let text = generate_driver(program, &inputs, &absolute).map_err(|e| format!("driver: {e}"))?;
    let base = format!("{}_{seed}", stem(path));
    let source = work.join(format!("{base}_driver.c"));
    let exe = work.join(&base);
    std::fs::write(&source, text).unwrap();
    let mut flags: Vec<String> = ["-std=c99", "-O1", "-w"].map(String::from).to_vec();
    flags.extend(cc_flags(&cfg.flags, &fixture_dir(KIND)));
    compile(&flags, &[&source], &exe).map_err(|e| format!("driver does not compile:\n{e}"))?;
    let run = Command::new(&exe).output().map_err(|e| e.to_string())?;
    if !run.status.success() {
        return Err(format!("seed {seed}: the driver exits with {}", run.status));
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let slots = describe_outputs(program, &inputs);
    if lines.len() != slots.len() {
        return Err(format!(
            "seed {seed}: the driver prints {} lines, {} expected",
            lines.len(),
            slots.len()
        ));
    }
    for (slot, line) in slots.iter().zip(&lines) {
        let ok = match slot.kind {
            ScalarKind::Real(_) => hex_float(line).is_some(),
            ScalarKind::Int { .. } => line.parse::<i64>().is_ok(),
        };
        if !ok {
            return Err(format!(
                "seed {seed}: output {} is '{line}', not a finite number",
                slot.label
            ));
        }
    }
    Ok(())
}

#[test]
fn every_head_runs_in_the_driver_to_finite_outputs() {
    let work = tempfile::tempdir().unwrap();
    for_each_fixture("driver", |path| {
        for seed in SEEDS {
            run_driver(path, seed, work.path())?;
        }
        Ok(())
    });
}

#[test]
fn the_readme_lists_every_fixture() {
    let readme = std::fs::read_to_string(fixture_dir(KIND).join("README.md"))
        .expect("tests/fixtures/tangent/README.md exists");
    for_each_fixture("README.md", |path| {
        let file = format!("{}.c", stem(path));
        let head = config(path).head;
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| {file} |")))
            .ok_or_else(|| format!("README.md has no table row for {file}"))?;
        if !row.contains(&format!("`{head}`")) {
            return Err(format!(
                "README.md's row for {file} does not give its head `{head}`"
            ));
        }
        Ok(())
    });
}

#[test]
fn hex_floats_are_read() {
    assert_eq!(hex_float("0x1.8p+0"), Some(1.5));
    assert_eq!(hex_float("-0x1p-2"), Some(-0.25));
    assert_eq!(hex_float("0x0p+0"), Some(0.0));
    assert_eq!(hex_float("0x1.fffffffffffffp+1023"), Some(f64::MAX));
    assert_eq!(hex_float("inf"), None);
    assert_eq!(hex_float("-nan"), None);
}
