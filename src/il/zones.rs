//! Zones. (Stub: being written.)
