//! The back ends: IL to C ([`print_c`]) and IL to S-expressions
//! ([`print_il`], specified in `spec/il-sexpr.md`).

pub mod c;
mod plan;
pub mod sexpr;

pub use c::print_c;
pub use sexpr::print_il;
