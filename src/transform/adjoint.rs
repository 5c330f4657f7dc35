//! Adjoint mode (§5.4): the rules of `rules/adjoint/*.rules` produce, for
//! each statement, the pair (forward sweep, backward sweep). Work in
//! progress: see ARCHITECTURE.md.

use crate::analysis::head::Head;
use crate::analysis::{Analysis, Mode, analyze_for};
use crate::engine::{self, RuleSet};
use crate::front::diag::Diagnostic;
use crate::front::source::SourceMap;
use crate::il::Program;

/// Options of `aioli adjoint`.
#[derive(Clone, Debug, Default)]
pub struct AdjointOptions {
    /// Write each emitted statement's rule ID as a trailing comment.
    pub explain: bool,
    /// Split mode for every call (`--split`): `f_fwd`/`f_bwd`.
    pub split: bool,
    /// Extra rule files (a user's `--rules`), after the bundled ones.
    pub user_rules: Vec<(String, String)>,
}

/// The bundled rule files plus the user's.
pub fn load_adjoint_rules(opts: &AdjointOptions) -> Result<RuleSet, engine::RuleError> {
    let mut files = crate::transform::tangent::bundled_rules();
    files.extend(opts.user_rules.iter().cloned());
    RuleSet::load(&files)
}

/// The text of `FILE_b.c`.
pub fn adjoint(
    program: &Program,
    sources: &SourceMap,
    heads: &[Head],
    rules: &RuleSet,
    opts: &AdjointOptions,
) -> Result<String, Diagnostic> {
    let a = analyze_for(program, heads, Mode::Adjoint);
    let out = adjoint_program(&a, rules, opts)?;
    Ok(crate::back::print_c(&out, sources))
}

/// The output program of the adjoint mode.
pub fn adjoint_program(
    a: &Analysis<'_>,
    _rules: &RuleSet,
    _opts: &AdjointOptions,
) -> Result<Program, Diagnostic> {
    let span = a
        .heads
        .first()
        .map(|h| a.program.proc(h.proc).span)
        .unwrap_or_default();
    Err(Diagnostic::error(span, "the adjoint mode is not built yet"))
}
