//! One folder per method (paper).

pub mod kanon;
