//! Invalid inputs: each file in `tests/fixtures/invalid/` is rejected with
//! exit status 1, a located `FILE:LINE:COL: error:` diagnostic with the
//! source line and a caret, no panic, and no output file.
//!
//! Each fixture's first line says what to expect:
//! `// aioli: error=LINE:COL 'words the message contains'`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn aioli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_aioli"))
}

struct Expected {
    line: usize,
    col: usize,
    words: String,
}

fn expectation(path: &Path) -> Expected {
    let bytes = std::fs::read(path).unwrap();
    let first = String::from_utf8_lossy(bytes.split(|b| *b == b'\n').next().unwrap()).to_string();
    let spec = first
        .split_once("error=")
        .unwrap_or_else(|| panic!("{}: first line has no `error=`", path.display()))
        .1;
    let (loc, words) = spec.split_once(' ').unwrap_or((spec, ""));
    let (line, col) = loc.split_once(':').unwrap();
    Expected {
        line: line.trim().parse().unwrap(),
        col: col.trim().parse().unwrap(),
        words: words.trim().trim_matches(['\'', '"']).to_string(),
    }
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/invalid");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    v.sort();
    v
}

#[test]
fn invalid_inputs_are_rejected_with_a_located_error() {
    let files = fixtures();
    assert!(files.len() >= 15, "only {} invalid fixtures", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let want = expectation(path);
        let out_dir = tempfile::tempdir().unwrap();
        for args in [
            vec!["parse".to_string(), path.display().to_string()],
            vec![
                "tangent".to_string(),
                path.display().to_string(),
                "--head".to_string(),
                "f".to_string(),
                "--out".to_string(),
                out_dir.path().display().to_string(),
            ],
        ] {
            let out = aioli().args(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let name = path.display();
            if out.status.code() != Some(1) {
                failures.push(format!(
                    "{name} ({}): exit {:?}",
                    args[0],
                    out.status.code()
                ));
                continue;
            }
            if stderr.contains("panicked") {
                failures.push(format!("{name}: panic: {stderr}"));
                continue;
            }
            let prefix = format!("{}:{}:{}: error: ", path.display(), want.line, want.col);
            let mut lines = stderr.lines();
            let first = lines.next().unwrap_or("");
            if !first.starts_with(&prefix) {
                failures.push(format!("{name}: expected `{prefix}...`, got `{first}`"));
                continue;
            }
            if !first.to_lowercase().contains(&want.words.to_lowercase()) {
                failures.push(format!("{name}: message `{first}` lacks `{}`", want.words));
            }
            let caret = lines.nth(1).unwrap_or("");
            if !caret.trim_start().starts_with('^') {
                failures.push(format!("{name}: no caret line in `{stderr}`"));
            }
        }
        let written: Vec<_> = std::fs::read_dir(out_dir.path()).unwrap().collect();
        if !written.is_empty() {
            failures.push(format!("{}: left files in --out", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn usage_errors_exit_with_status_2() {
    let out = aioli().args(["parse"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = aioli().args(["frobnicate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_missing_file_is_a_located_error() {
    let out = aioli().args(["parse", "no/such/file.c"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("no/such/file.c:1:1: error: "),
        "{stderr}"
    );
}
