//! Flow graphs derived from the structured IL. (Stub: being written.)
