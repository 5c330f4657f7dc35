//! The front end never panics: fixtures mutated at random (bytes deleted,
//! duplicated, swapped, replaced by C punctuation or garbage) are either
//! accepted — and then printed and validated without panicking — or rejected
//! with a diagnostic whose span lies inside a known file.

use aioli::front::{FrontOptions, load};
use proptest::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/front");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    v.sort();
    v.into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, &'static str),
    Swap(usize, usize),
    Byte(usize, u8),
}

const SNIPPETS: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "*",
    "&",
    "->",
    ".",
    "=",
    "++",
    "#",
    "#define X(",
    "#if 1\n",
    "#endif\n",
    "/*",
    "*/",
    "\"",
    "'",
    "int",
    "double",
    "struct",
    "return",
    "else",
    "case 1:",
    "goto l;",
    "sizeof(",
    "(double)",
    "?",
    ":",
    "0x",
    "1e",
    "\\\n",
    "\n#include \"",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Mutation::Duplicate(a, n)),
        (any::<usize>(), proptest::sample::select(SNIPPETS))
            .prop_map(|(a, s)| Mutation::Insert(a, s)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Mutation::Byte(a, b)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match *m {
        Mutation::Delete(a, n) => {
            let a = a % len;
            let b = (a + n).min(len);
            bytes.drain(a..b);
        }
        Mutation::Duplicate(a, n) => {
            let a = a % len;
            let b = (a + n).min(len);
            let piece = bytes[a..b].to_vec();
            bytes.splice(b..b, piece);
        }
        Mutation::Insert(a, s) => {
            let a = a % (len + 1);
            bytes.splice(a..a, s.bytes());
        }
        Mutation::Swap(a, b) => bytes.swap(a % len, b % len),
        Mutation::Byte(a, b) => bytes[a % len] = b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_fixtures_never_panic(
        pick in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let corpus = corpus();
        let (path, original) = &corpus[pick % corpus.len()];
        let mut bytes = original.clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        let dir = tempfile::tempdir().unwrap();
        // Keep the fixture's directory reachable for its local includes.
        let fixture_dir = path.parent().unwrap().to_path_buf();
        let file = dir.path().join("mutant.c");
        std::fs::write(&file, &bytes).unwrap();
        let options = FrontOptions {
            include_dirs: vec![fixture_dir.clone(), fixture_dir.join("include")],
            defines: Vec::new(),
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| match load(&file, &options) {
            Ok(loaded) => {
                let _ = aioli::back::print_c(&loaded.program, &loaded.sources);
                let _ = aioli::back::print_il(&loaded.program, &loaded.sources);
                let problems = aioli::il::validate::validate(&loaded.program);
                assert!(problems.is_empty(), "invalid IL: {problems:?}");
            }
            Err((sources, d)) => {
                let text = aioli::front::diag::render(&sources, &d);
                assert!(text.contains(": error: "), "{text}");
            }
        }));
        prop_assert!(outcome.is_ok(), "panic on mutations {:?} of {}", mutations, path.display());
    }
}

/// 300 cases in CI; `AIOLI_FUZZ_CASES=N` runs more locally.
fn fuzz_cases() -> u32 {
    std::env::var("AIOLI_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
}
