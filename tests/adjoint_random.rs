//! Property: on random C programs (`cgen::random_program`), the adjoint
//! mode's `head_b` passes the dot-product test against dual numbers.
//!
//! Each case generates a program with the head
//! `void head(int n, const double *x, double *y, double a)` (n from 3 to 5),
//! differentiates it in adjoint mode for the head `head(y)/(x a)` through
//! the library, and runs
//! `check::adjoint_interp::adjoint_vs_tangent_dual` at inputs drawn in
//! the program's domain: `⟨ȳ, J ẋ⟩` (the original with dual numbers)
//! against `⟨Jᵀ ȳ, ẋ⟩` (`head_b` in the interpreter) for random ẋ and ȳ.
//! 1000 cases per property per run (`AIOLI_ADJOINT_CASES` to change).
//!
//! The generator's features are chosen inside what the adjoint mode
//! supports today (`GenFeatures`): double only. Helpers take arrays,
//! slices and addresses (`pointer_calls`), structs by value and by
//! pointer; `switch`, `break`/`continue`, `return` in the middle of a
//! helper and the bounded recursive helper go through `adjoint/structure`.
//! Helpers with real arguments and results are called in active contexts,
//! so `_fwd`/`_bwd` pairs are exercised, and in passive ones that overwrite
//! active memory (`deriv-use/adjoint-reset` at a call) or receive arrays
//! without adjoint (`adjoint/actual-pointer-passive`). Even seeds run with
//! calls checkpointed (`adjoint/call-joint`), odd ones with `--split`.
//! Measured on 400 programs ([`enough_generated_programs_are_tested`]):
//! 350 tested, none refused, 50 discarded (pointer arguments that may
//! overlap). Before calls that only overwrite active memory were made
//! active, 107 were refused. `AIOLI_SHOW_REFUSAL=words` prints the
//! refused programs whose message contains the words.
//!
//! - A program the front end rejects, a program whose original run fails
//!   in the interpreter, and a program the adjoint mode refuses with one
//!   of its documented "not yet" messages (`adjoint/refuse`) is discarded
//!   (`prop_assume!`); so are programs with pointer arguments that may
//!   overlap (the analyses assume they do not, and say so with a warning).
//! - Any other adjoint-mode error is a failure, and so is a failing run of
//!   `head_b` when the original ran, an adjoint stack `head_b` does not
//!   leave empty, and products that differ by more than the tolerance.

use aioli::analysis::{analyze_adjoint, parse_head};
use aioli::cgen::{GenConfig, random_program};
use aioli::check::adjoint_interp::{DotCheckError, DotOptions, adjoint_vs_tangent_dual};
use aioli::check::domain::Domain;
use aioli::check::driver::compute_inputs;
use aioli::front::{FrontOptions, Loaded, load};
use aioli::transform::adjoint::{AdjointOptions, adjoint_program, load_adjoint_rules};
use proptest::prelude::*;

const HEAD: &str = "head(y)/(x a)";

/// The largest relative error allowed between the two products (see
/// `DotComparison::error`): both sides evaluate the same chain rule in
/// double precision, in different orders.
const TOLERANCE: f64 = 1e-9;

/// The words of the adjoint mode's documented refusals.
const REFUSALS: &[&str] = &[
    "the adjoint mode does not handle ",
    "the adjoint mode does not yet handle a passive call",
    "the adjoint mode does not yet pass a zero adjoint buffer",
    "the adjoint mode does not differentiate lgamma and tgamma yet",
    "the adjoint mode cannot yet save the memory",
];

fn cases() -> u32 {
    match std::env::var("AIOLI_ADJOINT_CASES") {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("AIOLI_ADJOINT_CASES={v:?} is not a number")),
        Err(_) => 1000,
    }
}

/// The generated programs: smooth, double only, calls passing pointers
/// included.
fn config(n: usize) -> GenConfig {
    let mut config = GenConfig::smooth();
    config.n = n;
    let f = &mut config.features;
    f.floats = false;
    f.pointer_calls = true;
    config
}

fn load_text(source: &str) -> Result<Loaded, String> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("random.c");
    std::fs::write(&path, source).expect("writing the program");
    if let Ok(dump) = std::env::var("AIOLI_DUMP_PROGRAM") {
        let _ = std::fs::write(dump, source);
    }
    load(&path, &FrontOptions::default()).map_err(|(s, d)| aioli::front::diag::render(&s, &d))
}

/// What became of one generated program.
#[derive(Debug)]
enum Outcome {
    Tested,
    /// Refused by the adjoint mode with a documented message.
    Refused(String),
    /// Outside what the test claims anything about.
    Discarded(String),
    Failed(String),
}

fn check(seed: u64, n: usize, point: u64) -> Outcome {
    let generated = random_program(seed, &config(n));
    let loaded = match load_text(&generated.source) {
        Ok(l) => l,
        Err(e) => return Outcome::Discarded(format!("front end: {e}")),
    };
    let program = &loaded.program;
    let show = || format!("program (seed {seed}, n {n}):\n{}", generated.source);
    let head = match parse_head(program, HEAD) {
        Ok(h) => h,
        Err(e) => return Outcome::Failed(format!("head: {e}\n{}", show())),
    };
    // Odd seeds with `--split`, even ones with calls checkpointed.
    let opts = AdjointOptions {
        split: seed % 2 == 1,
        ..AdjointOptions::default()
    };
    let rules = match load_adjoint_rules(&opts) {
        Ok(r) => r,
        Err(e) => return Outcome::Failed(format!("rules: {e:?}")),
    };
    let structured = aioli::transform::structure::structure_jumps(program);
    let a = analyze_adjoint(&structured, std::slice::from_ref(&head), opts.split);
    if a.warnings
        .iter()
        .any(|w| w.message.contains("analysed as if they did not overlap"))
    {
        return Outcome::Discarded("pointer arguments that may overlap".into());
    }
    let out = match adjoint_program(&a, &rules, &opts) {
        Ok(p) => p,
        Err(d) if REFUSALS.iter().any(|w| d.message.contains(w)) && d.message.contains("yet") => {
            if let Ok(words) = std::env::var("AIOLI_SHOW_REFUSAL")
                && d.message.contains(&words)
            {
                println!(
                    "refused at {}: {}\n{}",
                    loaded.sources.location(d.span),
                    d.message,
                    show()
                );
            }
            return Outcome::Refused(d.message.clone());
        }
        Err(d) if d.message.contains("arguments overlap") => {
            return Outcome::Discarded(d.message.clone());
        }
        Err(d) => {
            return Outcome::Failed(format!(
                "the adjoint mode fails: {}: {}\n{}",
                loaded.sources.location(d.span),
                d.message,
                show()
            ));
        }
    };
    let code = || aioli::back::print_c(&out, &loaded.sources);
    let domain = match Domain::parse(&generated.domain) {
        Ok(d) => d,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let inputs = match compute_inputs(program, "head", &domain, point) {
        Ok(i) => i,
        Err(e) => return Outcome::Failed(format!("inputs: {e}\n{}", show())),
    };
    let options = DotOptions {
        fuel: 1_000_000,
        ..DotOptions::default()
    };
    match adjoint_vs_tangent_dual(program, &out, &head, &inputs, point ^ 0xAD, &options) {
        Ok(cmp) if cmp.error < TOLERANCE && cmp.stack_left == 0 => Outcome::Tested,
        Ok(cmp) => Outcome::Failed(format!(
            "the dot-product test fails (input point {point}):\n{}\n{}\nadjoint code:\n{}",
            cmp.table(),
            show(),
            code()
        )),
        Err(DotCheckError::Original { error, .. }) => {
            Outcome::Discarded(format!("the original does not run: {error}"))
        }
        Err(e) => {
            let at = match &e {
                DotCheckError::Adjoint { span, .. } if *span != Default::default() => {
                    format!(" at {}", loaded.sources.location(*span))
                }
                _ => String::new(),
            };
            Outcome::Failed(format!("{e}{at}\n{}\nadjoint code:\n{}", show(), code()))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_global_rejects: 10_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn adjoint_code_passes_the_dot_product_test_on_random_programs(
        seed in any::<u64>(),
        n in 3usize..=5,
        point in 1u64..1000,
    ) {
        match check(seed, n, point) {
            Outcome::Tested => {}
            Outcome::Refused(m) | Outcome::Discarded(m) => {
                return Err(TestCaseError::reject(m));
            }
            Outcome::Failed(m) => return Err(TestCaseError::fail(m)),
        }
    }
}

/// At least half of the generated programs are actually tested (not
/// refused or discarded); prints the reasons of the others.
#[test]
fn enough_generated_programs_are_tested() {
    let total = 400u64;
    let (mut tested, mut refused, mut discarded, mut failed) = (0, 0, 0, 0);
    let mut reasons = std::collections::BTreeMap::<String, usize>::new();
    let mut first_failure = None;
    for k in 0..total {
        let seed = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5A5;
        match check(seed, 3 + (k % 3) as usize, 1 + k % 997) {
            Outcome::Tested => tested += 1,
            Outcome::Refused(m) => {
                refused += 1;
                let key = m.split(" (").next().unwrap_or(&m).to_string();
                *reasons.entry(key).or_default() += 1;
            }
            Outcome::Discarded(m) => {
                discarded += 1;
                *reasons.entry(m.chars().take(60).collect()).or_default() += 1;
            }
            Outcome::Failed(m) => {
                failed += 1;
                let key = format!(
                    "FAILED: {}",
                    m.lines()
                        .next()
                        .unwrap_or("")
                        .split(" at /")
                        .next()
                        .unwrap_or("")
                        .replace(|c: char| c.is_ascii_digit(), "#")
                );
                *reasons.entry(key.chars().take(150).collect()).or_default() += 1;
                // AIOLI_SHOW_FAILURE=words: print the first failure whose
                // message contains them.
                let wanted = std::env::var("AIOLI_SHOW_FAILURE").unwrap_or_default();
                if m.contains(&wanted) {
                    first_failure.get_or_insert(m);
                }
            }
        }
    }
    println!(
        "{total} programs: {tested} tested, {failed} failed the test, {refused} refused, {discarded} discarded"
    );
    for (r, c) in &reasons {
        println!("{c:5}  {r}");
    }
    if let Some(m) = first_failure {
        println!("first failure:\n{m}");
    }
    assert!(
        (tested + failed) * 2 >= total,
        "only {} of {total} programs are tested",
        tested + failed
    );
}
