//! Transformations driven by the rules: tangent mode (this issue), adjoint
//! mode (next).

/// A bundled rule file: (its path, its text), embedded at build time so the
/// tool works from anywhere.
macro_rules! rule_file {
    ($p:literal) => {
        (
            $p.to_string(),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $p)).to_string(),
        )
    };
}

pub mod adjoint;
pub mod names;
pub mod structure;
pub mod tangent;
pub mod varied;
pub mod vector;
