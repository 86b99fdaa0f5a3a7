//! One folder per method (paper).

pub mod hceil;
pub mod kanon;
