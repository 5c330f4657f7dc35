//! Helpers shared by the tests that run the fixture corpus: listing the
//! fixtures, reading their `// aioli:` pragma, and turning its flags into
//! front-end options and `cc` arguments.

#![allow(dead_code)] // each test binary uses its own subset

use aioli::check::pragma::{FixtureConfig, Pragma, parse_pragma};
use aioli::front::FrontOptions;
use std::path::{Path, PathBuf};

/// `tests/fixtures/<kind>`.
pub fn fixture_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind)
}

/// The `.c` files of `tests/fixtures/<kind>`, sorted.
pub fn c_files(kind: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture_dir(kind))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    files
}

/// The first line of a file (lossily decoded: invalid fixtures may hold
/// garbage after it).
pub fn first_line(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// A valid fixture's configuration.
pub fn config(path: &Path) -> FixtureConfig {
    match parse_pragma(&first_line(path)) {
        Ok(Pragma::Valid(c)) => c,
        other => panic!("{}: bad pragma: {other:?}", path.display()),
    }
}

/// The C compiler: `$CC` or `cc`.
pub fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// The pragma's flags as front-end options, `-I` relative to `dir`.
pub fn front_options(flags: &[String], dir: &Path) -> FrontOptions {
    let mut opts = FrontOptions::default();
    for f in flags {
        if let Some(d) = f.strip_prefix("-I") {
            opts.include_dirs.push(dir.join(d));
        } else if let Some(def) = f.strip_prefix("-D") {
            match def.split_once('=') {
                Some((n, v)) => opts.defines.push((n.to_string(), Some(v.to_string()))),
                None => opts.defines.push((def.to_string(), None)),
            }
        } else {
            panic!("unexpected flag {f}");
        }
    }
    opts
}

/// The pragma's flags for `cc`, `-I` made absolute.
pub fn cc_flags(flags: &[String], dir: &Path) -> Vec<String> {
    flags
        .iter()
        .map(|f| match f.strip_prefix("-I") {
            Some(d) => format!("-I{}", dir.join(d).display()),
            None => f.clone(),
        })
        .collect()
}

/// Runs the C compiler: `flags`, `-o out`, the sources, then `-lm` when it
/// links (not with `-c`). On failure, its messages.
pub fn compile<S: AsRef<std::ffi::OsStr>>(
    flags: &[S],
    sources: &[&Path],
    out: &Path,
) -> Result<(), String> {
    let mut command = std::process::Command::new(cc());
    command.args(flags).arg("-o").arg(out).args(sources);
    if !flags.iter().any(|f| f.as_ref() == "-c") {
        command.arg("-lm");
    }
    let result = command.output().map_err(|e| e.to_string())?;
    if result.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&result.stderr).into_owned())
    }
}

/// Generated C without its comments (`/* rule */` tags, the user's
/// comments): what the compiler sees, for counting calls in it.
pub fn code_without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("/*").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}
