//! IL invariants. (Stub: being written.)
