//! Simplification of derivative expressions with egg (filled in by the simplifier work).
