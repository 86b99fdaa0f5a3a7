//! One folder per method (paper).

pub mod artuc;
pub mod entropy;
pub mod hceil;
pub mod ipa;
pub mod kanon;
pub mod options;
