//! The back ends: IL to C and IL to S-expressions. (Stub: being written.)
