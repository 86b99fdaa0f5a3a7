//! ArtUC: (k, k^m)-anonymity of RT-datasets under utility constraints (Poulis, Loukides,
//! Skiadopoulos, Gkoulalas-Divanis, "Anonymizing datasets with demographics and diagnosis codes
//! in the presence of utility constraints", J. Biomed. Inform. 2017).
//!
//! An RT-dataset ([`RtTable`]) has demographics (relational quasi-identifiers) and a set of
//! diagnosis codes per patient. Given a utility constraint set U ([`ConstraintSet`], Defs. 8–9),
//! k, m, δ and ε, ArtUC (Algorithm 1, [`anonymize`]) publishes a (k, k^m)-anonymous version
//! (Def. 1) that satisfies U, with NCP ≤ δ (Defs. 3–4), at most ε suppressed codes, and small UL
//! (Defs. 5–6):
//! 1. record grouping ([`ConstraintSet::group`]): one group per constraint's demographics;
//! 2. cluster formation ([`formation`]): k-record clusters with minimal NCP;
//! 3. cluster merging ([`merge`]): merge clusters whose union has minimal UL, NCP ≤ δ;
//! 4. (k, k^m)-anonymization: GenDiag ([`gendiag`], Appendix A) on every cluster.
//!
//! [`anytime`] is Algorithm 2: the whole merge trajectory (NCP, UL, suppressed codes per step)
//! for the data owner to choose from, and [`Trajectory::release`] publishes a chosen step.
//! [`baseline`] is the paper's Baseline (Section 5). [`release`] builds the Arrow release.

pub(crate) mod build;
pub(crate) mod constraints;
pub(crate) mod data;
#[cfg(test)]
mod equivalence;
pub mod formation;
pub mod gendiag;
#[cfg(test)]
mod gendiag_reference;
pub(crate) mod hull;
pub(crate) mod load;
pub(crate) mod merge;
pub(crate) mod publish;
pub mod release;
mod run;
pub(crate) mod variant;

pub use constraints::{CodeElement, ConstraintSet, DemographicElement, Element, Group, UtilityConstraint};
pub use data::{CodeColumn, RtTable};
pub use formation::{Cluster, Pick};
pub use gendiag::{Diag, gendiag};
pub use hull::Hull;
pub use load::constraints_from_batches;
pub use run::{AnonCluster, ArtucResult, Measures, Step, Trajectory, anonymize, anytime, baseline};
pub use variant::{Outcome, Source, Variant, call};

use crate::error::{AnonError, Result};
use crate::methods::options::{Kind, OptionSpec, Options, Parsed, SEED, opt};

pub(crate) const F: &str = "artuc";

/// How Step 6 picks the record that starts a cluster (ArtUC's and RmR's).
pub(crate) const PICK: OptionSpec = opt(
    "pick",
    Kind::Choice(&["random", "first"]),
    "random",
    "how a cluster's first record is picked: at random (seed=), or the first in table order",
);
/// w_i of Definition 4 (ArtUC's and RmR's).
pub(crate) const WEIGHTS: OptionSpec =
    opt("weights", Kind::Text("w1:w2"), "1/l each", "one weight in [0, 1] per demographic attribute");
pub(crate) const SMALL_GROUPS: OptionSpec = opt(
    "small_groups",
    Kind::Choice(&["error", "withhold"]),
    "error",
    "a group smaller than k is an error, or Step 2 withholds it",
);

/// [`ArtucConfig`]'s options (the SQL function adds the variant: [`variant::SQL_OPTIONS`]).
pub(crate) const OPTIONS: Options = Options { function: F, specs: &[SEED, PICK, WEIGHTS, SMALL_GROUPS] };

/// The parameters ArtUC and its competitor RmR ([`crate::methods::rmr`]) share: (k, k^m), the
/// limits δ and ε, and how clusters are formed.
#[derive(Debug, Clone, PartialEq)]
pub struct KmConfig {
    /// Every record is indistinguishable from k − 1 others (Def. 1).
    pub k: u64,
    /// The attacker knows up to m diagnosis codes.
    pub m: u64,
    /// Requirement 1: NCP(D̃) ≤ δ.
    pub delta: f64,
    /// Requirement 4: at most ε suppressed diagnosis codes.
    pub epsilon: u64,
    /// w_i of Definition 4, one per demographic attribute; `None` weighs each 1/l (Example 3).
    pub weights: Option<Vec<f64>>,
    /// How Step 6 picks the record that starts a cluster.
    pub pick: Pick,
    /// `None` draws from OS entropy (only used with [`Pick::Random`]).
    pub seed: Option<u64>,
}

impl KmConfig {
    pub(crate) fn new(k: u64, m: u64, delta: f64, epsilon: u64) -> Self {
        KmConfig { k, m, delta, epsilon, weights: None, pick: Pick::Random, seed: None }
    }

    /// Read the shared options ([`SEED`], [`PICK`], [`WEIGHTS`]) of `function`.
    pub(crate) fn read(&mut self, function: &str, o: &Parsed) -> Result<()> {
        self.seed = o.seed().or(self.seed);
        self.pick = o.choice("pick", |v| Pick::parse(function, v).ok())?.unwrap_or(self.pick);
        if let Some(w) = o.text("weights") {
            self.weights = Some(parse_weights(function, w)?);
        }
        Ok(())
    }

    /// Random record picks without a seed differ from call to call.
    pub(crate) fn deterministic(&self) -> bool {
        self.seed.is_some() || self.pick == Pick::First
    }

    /// The generator of the record picks: seeded, or from OS entropy.
    pub(crate) fn rng(&self) -> rand::rngs::StdRng {
        match self.seed {
            Some(s) => rand::SeedableRng::seed_from_u64(s),
            None => rand::make_rng(),
        }
    }

    /// The weights w_i, defaulting to 1/l each.
    pub(crate) fn weights_for(&self, table: &RtTable) -> Vec<f64> {
        self.weights.clone().unwrap_or_else(|| vec![1.0 / table.attributes().max(1) as f64; table.attributes()])
    }
}

/// The parameters of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtucConfig {
    /// k, m, δ, ε and cluster formation.
    pub km: KmConfig,
    /// Step 2 removes groups smaller than k. Off by default: a group smaller than k is then an
    /// error, so no record disappears from the release without the owner asking for it.
    pub withhold_small_groups: bool,
}

impl ArtucConfig {
    pub fn new(k: u64, m: u64, delta: f64, epsilon: u64) -> Self {
        ArtucConfig { km: KmConfig::new(k, m, delta, epsilon), withhold_small_groups: false }
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.km.seed = Some(seed);
        self
    }

    pub fn with_pick(mut self, pick: Pick) -> Self {
        self.km.pick = pick;
        self
    }

    /// Parse the options [`OPTIONS`] declares.
    pub fn with_options(self, options: &str) -> Result<Self> {
        self.read(&OPTIONS.parse(options)?)
    }

    /// The options of [`OPTIONS`] (or of the SQL function's, which adds the variant).
    pub(crate) fn read(mut self, o: &Parsed) -> Result<Self> {
        self.km.read(F, o)?;
        let small = |v: &str| crate::keyword::parse(&[(false, &["error"]), (true, &["withhold", "suppress"])], v);
        self.withhold_small_groups = o.choice("small_groups", small)?.unwrap_or(self.withhold_small_groups);
        Ok(self)
    }

    /// Check the parameters against the table (δ and ε are checked by [`ArtucConfig::validate_limits`]).
    pub(crate) fn validate(&self, table: &RtTable) -> Result<()> {
        let c = &self.km;
        if c.k < 1 {
            return Err(AnonError::argument(F, "k", "must be at least 1"));
        }
        crate::methods::check_k_fits(F, c.k, table.len() as u64)?;
        if c.m < 1 {
            return Err(AnonError::argument(F, "m", format!("must be at least 1, got {}", c.m)));
        }
        check_weights(F, c.weights.as_deref(), table)
    }

    /// δ must be a number in [0, 1] (NCP's range).
    pub(crate) fn validate_limits(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.km.delta) {
            return Err(AnonError::argument(F, "delta", format!("must be in [0, 1], got {}", self.km.delta)));
        }
        Ok(())
    }
}

/// The `weights=w1:w2:...` option of `function` (ArtUC's and RmR's w_i of Definition 4).
pub(crate) fn parse_weights(function: &str, value: &str) -> Result<Vec<f64>> {
    value
        .split(':')
        .map(|w| {
            w.trim().parse::<f64>().map_err(|_| {
                AnonError::argument(function, "weights", format!("'{w}' is not a number (weights=w1:w2:...)"))
            })
        })
        .collect()
}

/// Weights, when given, are one per demographic attribute of `table`, each in [0, 1].
pub(crate) fn check_weights(function: &str, weights: Option<&[f64]>, table: &RtTable) -> Result<()> {
    match weights {
        Some(w) if w.len() != table.attributes() || w.iter().any(|x| !(0.0..=1.0).contains(x)) => {
            Err(AnonError::argument(
                function,
                "weights",
                format!("expected {} weights in [0, 1] (one per demographic attribute)", table.attributes()),
            ))
        }
        _ => Ok(()),
    }
}
