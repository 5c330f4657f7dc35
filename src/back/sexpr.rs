//! The S-expression back end. (Being written.)

use crate::front::source::SourceMap;
use crate::il::Program;

/// Prints the whole IL as S-expressions (`spec/il-sexpr.md`).
pub fn print_il(program: &Program, sources: &SourceMap) -> String {
    let _ = (program, sources);
    String::new()
}
