//! Transformations driven by the rules: tangent mode (this issue), adjoint
//! mode (next).

pub mod adjoint;
pub mod names;
pub mod tangent;
pub mod varied;
pub mod vector;
