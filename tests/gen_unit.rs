//! The program generators produce C that a strict compiler accepts and that
//! runs without undefined behaviour.

use aioli::cgen::{GenConfig, RandomProgram, random_program, realistic_c};
use std::path::Path;
use std::process::Command;

const SEEDS: u64 = 100;

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

const STRICT: &[&str] = &["-std=c99", "-Wall", "-Wextra", "-Werror"];
const SANITIZE: &str = "-fsanitize=undefined,address,float-divide-by-zero,float-cast-overflow";

/// Whether the compiler can build and run a sanitized program here.
fn sanitizers_work(dir: &Path) -> bool {
    let src = dir.join("probe.c");
    std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    let exe = dir.join("probe");
    let built = Command::new(cc())
        .arg(SANITIZE)
        .arg("-fno-sanitize-recover=all")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    built
        && Command::new(&exe)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
}

fn check_program(
    dir: &Path,
    seed: u64,
    program: &RandomProgram,
    sanitize: bool,
) -> Result<(), String> {
    let src = dir.join(format!("prog{seed}.c"));
    std::fs::write(&src, &program.source).unwrap();
    run(Command::new(cc())
        .args(STRICT)
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("prog{seed}.o"))))?;
    let main = dir.join(format!("main{seed}.c"));
    let inputs = program.sample_inputs(seed);
    std::fs::write(&main, program.c_main(&inputs)).unwrap();
    let exe = dir.join(format!("prog{seed}"));
    let mut build = Command::new(cc());
    build.args(STRICT).arg("-O1").arg("-g");
    if sanitize {
        build.arg(SANITIZE).arg("-fno-sanitize-recover=all");
    }
    run(build.arg(&src).arg(&main).arg("-o").arg(&exe).arg("-lm"))?;
    let mut exec = Command::new(&exe);
    exec.env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1");
    exec.env("ASAN_OPTIONS", "detect_leaks=0");
    let stdout = run(&mut exec)?;
    let values: Vec<f64> = stdout
        .lines()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .map_err(|e| format!("bad output line {l:?}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    if values.len() != program.n {
        return Err(format!(
            "expected {} outputs, got {}",
            program.n,
            values.len()
        ));
    }
    if let Some(v) = values.iter().find(|v| !v.is_finite()) {
        return Err(format!("non-finite output {v}"));
    }
    Ok(())
}

#[test]
fn random_programs_compile_strictly_and_run_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let sanitize = sanitizers_work(dir.path());
    if !sanitize {
        eprintln!("note: -fsanitize is not available here; running plain builds");
    }
    let config = GenConfig::default();
    let mut failures = Vec::new();
    for seed in 0..SEEDS {
        let program = random_program(seed, &config);
        if let Err(e) = check_program(dir.path(), seed, &program, sanitize) {
            let first = e.lines().take(12).collect::<Vec<_>>().join("\n");
            eprintln!("seed {seed}: {first}");
            failures.push(format!(
                "seed {seed}: {e}\n--- program ---\n{}",
                program.source
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures; first:\n{}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn smooth_programs_compile_strictly_and_run_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let sanitize = sanitizers_work(dir.path());
    let config = GenConfig::smooth();
    for seed in 1000..1020 {
        let program = random_program(seed, &config);
        for banned in ["fmin(", "fmax(", "(int) ", "> 0.0 ?", "hypot(x", "cbrt(x"] {
            assert!(
                !program.source.contains(banned),
                "seed {seed}: smooth program contains {banned:?}"
            );
        }
        if let Err(e) = check_program(dir.path(), seed, &program, sanitize) {
            panic!("seed {seed}: {e}\n--- program ---\n{}", program.source);
        }
    }
}

#[test]
fn random_programs_are_deterministic_varied_and_sized() {
    let config = GenConfig::default();
    let mut distinct = std::collections::HashSet::new();
    for seed in 0..SEEDS {
        let a = random_program(seed, &config);
        let b = random_program(seed, &config);
        assert_eq!(a.source, b.source, "seed {seed} is not deterministic");
        let lines = a.source.lines().count();
        assert!((20..=150).contains(&lines), "seed {seed}: {lines} lines");
        assert!(
            a.source
                .contains("void head(int n, const double *x, double *y, double a)")
        );
        assert_eq!(a.domain, "n=6 x[n]=[-1,1] y[n]=[-1,1] a=[0.5,1.5]");
        distinct.insert(a.source);
    }
    assert_eq!(distinct.len() as u64, SEEDS);
}

#[test]
fn random_programs_use_the_requested_constructs() {
    let config = GenConfig::default();
    let all: String = (0..SEEDS)
        .map(|s| random_program(s, &config).source)
        .collect();
    for construct in [
        "for (",
        "while (",
        "do {",
        "switch (",
        "/* fall through */",
        "else if",
        "typedef struct",
        "->",
        "float ",
        "(double) ",
        "(int) ",
        "+=",
        "*=",
        "++",
        "--",
        " ? ",
        "&x[",
        "sqrt(",
        "log1p(",
        "exp(",
        "pow(",
        "atan2(",
        "hypot(",
        "cbrt(",
        "erf(",
        "expm1(",
        " % ",
        "//",
        "/*",
        "break;",
        "continue;",
        "depth - 1",
        "g_",
        " >= 0; ",
    ] {
        assert!(all.contains(construct), "no program uses {construct:?}");
    }
}

#[test]
fn realistic_c_compiles_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    for (lines, seed) in [(300usize, 1u64), (1000, 2), (3000, 3)] {
        let text = realistic_c(lines, seed);
        assert_eq!(text, realistic_c(lines, seed), "not deterministic");
        let count = text.lines().count();
        assert!(
            count >= lines * 9 / 10 && count <= lines * 11 / 10 + 40,
            "asked {lines} lines, got {count}"
        );
        let src = dir.path().join(format!("bench{lines}.c"));
        std::fs::write(&src, &text).unwrap();
        if let Err(e) = run(Command::new(cc())
            .args(STRICT)
            .arg("-c")
            .arg(&src)
            .arg("-o")
            .arg(dir.path().join(format!("bench{lines}.o"))))
        {
            panic!("{e}");
        }
    }
}
