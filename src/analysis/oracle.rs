//! A naive worklist solver of the same equations (placeholder, being written).
