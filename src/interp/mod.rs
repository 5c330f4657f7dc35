//! The IL interpreter. (Stub: being written.)
