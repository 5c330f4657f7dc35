//! The fixture corpus against the C compiler and the check driver.
//!
//! - every valid fixture has a well-formed pragma and compiles warning-free
//!   with `cc -std=c99 -Wall -Wextra`;
//! - together they call every `<math.h>` function of CONTRACT §4;
//! - every valid fixture loads through the front end, gets inputs from its
//!   domain, and its generated driver compiles and runs, printing one line
//!   per described output;
//! - every invalid fixture is rejected at the location, and with words,
//!   its pragma gives.

mod common;

use aioli::check::domain::Domain;
use aioli::check::driver::{compute_inputs, describe_outputs, generate_driver};
use aioli::check::pragma::{Pragma, parse_pragma};
use aioli::front::FrontOptions;
use common::{c_files, cc, cc_flags, compile, config, first_line, fixture_dir, front_options};
use std::path::Path;
use std::process::Command;

#[test]
fn corpus_is_large_enough() {
    assert!(c_files("front").len() >= 34);
    assert!(c_files("invalid").len() >= 18);
}

#[test]
fn valid_fixtures_compile_without_warnings() {
    let dir = fixture_dir("front");
    let out = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for path in c_files("front") {
        let cfg = config(&path);
        Domain::parse(&cfg.domain).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let result = Command::new(cc())
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-o"])
            .arg(out.path().join("x.o"))
            .args(cc_flags(&cfg.flags, &dir))
            .arg(&path)
            .output()
            .unwrap();
        if !result.status.success() {
            failures.push(format!(
                "{}:\n{}",
                path.display(),
                String::from_utf8_lossy(&result.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_math_function_appears_in_a_fixture() {
    let text: String = c_files("front")
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    for f in [
        "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sin",
        "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh", "hypot", "fabs", "fmin", "fmax", "erf", "erfc", "lgamma", "tgamma", "floor",
        "ceil", "round", "fmod", "copysign",
    ] {
        let call = format!("{f}(");
        let found = text.match_indices(&call).any(|(i, _)| {
            !text[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        assert!(found, "no fixture calls {f}");
    }
}

#[test]
fn invalid_fixtures_are_rejected_where_expected() {
    let mut failures = Vec::new();
    for path in c_files("invalid") {
        let expected = match parse_pragma(&first_line(&path)) {
            Ok(Pragma::Invalid(e)) => e,
            other => panic!("{}: bad pragma: {other:?}", path.display()),
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match aioli::front::load(&path, &FrontOptions::default()) {
            Ok(_) => failures.push(format!("{name}: accepted")),
            Err((sources, d)) => {
                let (line, col) = sources.file(d.span.file).line_col(d.span.lo as usize);
                if (line, col) != (expected.line, expected.col)
                    || !d.message.contains(&expected.text)
                {
                    failures.push(format!(
                        "{name}: got {line}:{col} {:?}, expected {}:{} containing {:?}",
                        d.message, expected.line, expected.col, expected.text
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Loads one fixture, generates its driver, compiles and runs it; returns
/// a description of the first problem.
fn run_fixture_driver(path: &Path, work: &Path) -> Result<(), String> {
    let dir = fixture_dir("front");
    let cfg = config(path);
    let loaded =
        aioli::front::load(path, &front_options(&cfg.flags, &dir)).map_err(|(sources, d)| {
            format!("front end: {}: {}", sources.location(d.span), d.message)
        })?;
    let domain = Domain::parse(&cfg.domain).map_err(|e| e.to_string())?;
    let inputs =
        compute_inputs(&loaded.program, &cfg.head, &domain, 2026).map_err(|e| e.to_string())?;
    let absolute = std::fs::canonicalize(path).unwrap();
    let text = generate_driver(&loaded.program, &inputs, &absolute).map_err(|e| e.to_string())?;
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    let source = work.join(format!("{stem}_driver.c"));
    let exe = work.join(&stem);
    std::fs::write(&source, &text).unwrap();
    let mut flags: Vec<String> = ["-std=c99", "-Wall", "-Wextra", "-Werror"]
        .map(String::from)
        .to_vec();
    flags.extend(cc_flags(&cfg.flags, &dir));
    compile(&flags, &[&source], &exe).map_err(|e| format!("driver does not compile:\n{e}"))?;
    let run = Command::new(&exe).output().unwrap();
    if !run.status.success() {
        return Err(format!("driver exits with {}", run.status));
    }
    let printed = String::from_utf8_lossy(&run.stdout).lines().count();
    let expected = describe_outputs(&loaded.program, &inputs).len();
    if printed != expected || printed == 0 {
        return Err(format!(
            "driver printed {printed} lines, {expected} described"
        ));
    }
    Ok(())
}

#[test]
fn every_fixture_runs_through_its_generated_driver() {
    let work = tempfile::tempdir().unwrap();
    let failures: Vec<String> = c_files("front")
        .iter()
        .filter_map(|p| {
            run_fixture_driver(p, work.path())
                .err()
                .map(|e| format!("{}: {e}", p.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} fixtures fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A parameter declared as an array of arrays (`double B[2][2]`, which C
/// adjusts to `double (*B)[2]`) gets one buffer of all its elements, passed
/// cast to the parameter's type: the driver compiles without a warning and
/// prints every element.
#[test]
fn a_parameter_of_rows_gets_one_buffer_of_all_their_elements() {
    use aioli::check::driver::ArgValue;
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("rows.c");
    std::fs::write(
        &path,
        "void mul(int n, const double A[][2], float B[2][2])\n{\n    for (int i = 0; i < 2; i++)\n        for (int j = 0; j < 2; j++)\n            B[i][j] = (float)(A[i][j] * A[j][i] * n);\n}\n",
    )
    .unwrap();
    let loaded = aioli::front::load(&path, &FrontOptions::default()).unwrap();
    let domain = Domain::parse("n=3 A[4]=[0.5,1] B[4]=[0,0]").unwrap();
    let inputs = compute_inputs(&loaded.program, "mul", &domain, 5).unwrap();
    let ArgValue::RealArray(a) = &inputs.args[1] else {
        panic!("{:?}", inputs.args[1]);
    };
    assert_eq!(a.len(), 4);
    let text = generate_driver(&loaded.program, &inputs, &path).unwrap();
    assert!(text.contains("(float (*)[2])"), "{text}");
    let source = work.path().join("rows_driver.c");
    let exe = work.path().join("rows");
    std::fs::write(&source, &text).unwrap();
    compile(
        &["-std=c99", "-Wall", "-Wextra", "-Werror"],
        &[&source],
        &exe,
    )
    .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let stdout = String::from_utf8_lossy(&run.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let slots = describe_outputs(&loaded.program, &inputs);
    assert_eq!(lines.len(), slots.len(), "{stdout}");
    // B's four elements, in row order, as float.
    let b: Vec<String> = (0..2)
        .flat_map(|i| (0..2).map(move |j| (i, j)))
        .map(|(i, j)| {
            let v = (a[i * 2 + j] * a[j * 2 + i] * 3.0) as f32;
            slots[4 + i * 2 + j].format(v as f64)
        })
        .collect();
    assert_eq!(lines[4..8], b[..], "{stdout}");
    // The interpreter lays the buffer out the same way.
    let interp =
        aioli::check::run_in_interpreter(&loaded.program, &inputs, &slots, 1_000_000).unwrap();
    assert_eq!(
        interp, stdout,
        "interpreter:\n{interp}\ncompiled:\n{stdout}"
    );
    // A domain that does not give whole rows is refused, naming the type.
    let bad = Domain::parse("n=3 A[3]=[0.5,1] B[4]=[0,0]").unwrap();
    let err = compute_inputs(&loaded.program, "mul", &bad, 5)
        .unwrap_err()
        .to_string();
    assert!(err.contains("const double (*)[2]"), "{err}");
    assert!(err.contains("multiple of 2"), "{err}");
}
