//! The command line's standard output: a reader that goes away early
//! (`aioli parse big.c | head`) ends aioli quietly, never with a panic.

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.c");
    // Far more output than a pipe holds, so aioli is still writing when
    // the reader closes its end.
    let mut text = String::new();
    for k in 0..4000 {
        text.push_str(&format!(
            "/* function {k} */\ndouble f{k}(double x)\n{{\n    return x * {k}.0 + 1.0;\n}}\n"
        ));
    }
    std::fs::write(&path, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_aioli"))
        .arg("parse")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(status.success(), "{status:?}\n{stderr}");
}
