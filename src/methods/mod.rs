//! One folder per method (paper).

pub mod artuc;
pub mod entropy;
pub mod hceil;
pub mod kanon;
pub mod options;
