//! Declarations the tool knows for system headers. (Stub: being written.)
