//! The back ends: IL to C and IL to S-expressions. (Stub: being written.)

use crate::front::source::SourceMap;
use crate::il::Program;

/// Prints a program as C. (Stub: being written.)
pub fn print_c(_program: &Program, _sources: &SourceMap) -> String {
    String::new()
}

/// Prints a program as S-expressions. (Stub: being written.)
pub fn print_il(_program: &Program, _sources: &SourceMap) -> String {
    String::new()
}
