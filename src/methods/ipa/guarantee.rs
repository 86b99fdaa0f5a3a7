//! What a release promises: `pure` (ε-DP), `approx` ((ε, δ)-DP) or `paper` (the paper's
//! algorithm as printed, which is not differentially private; docs/ipa.md). Parsed once here
//! for `ipa_release` and `dp_histogram`, so both refuse the same bad input the same way.

use crate::dp::DiscreteLaplace;
use crate::error::{AnonError, Result};

/// δ of `approx` when none is given: far below 1/N for any table this engine holds.
pub const DEFAULT_DELTA: f64 = 1e-9;

/// The text every non-private output carries (report, ledger, table metadata).
pub(crate) const NOT_DP: &str = "not differentially private";

/// The Arrow schema-metadata key of a release's guarantee.
pub(crate) const METADATA_KEY: &str = "anonfusion.guarantee";

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Guarantee {
    /// ε-differential privacy of everything published.
    Pure,
    /// (ε, δ)-differential privacy: noisy counts of non-empty cells, published above a threshold.
    Approx { delta: f64 },
    /// The paper's Algorithms 1–2 exactly; not differentially private.
    Paper,
}

impl Guarantee {
    pub fn name(&self) -> &'static str {
        match self {
            Guarantee::Pure => "pure",
            Guarantee::Approx { .. } => "approx",
            Guarantee::Paper => "paper",
        }
    }

    pub fn delta(&self) -> f64 {
        match self {
            Guarantee::Approx { delta } => *delta,
            _ => 0.0,
        }
    }

    /// The sentence written to the report, the ledger and the release's metadata.
    pub(crate) fn statement(&self) -> String {
        match self {
            Guarantee::Pure => "epsilon-differentially private (add/remove one record)".into(),
            Guarantee::Approx { delta } => {
                format!("(epsilon, delta)-differentially private with delta = {delta:e} (add/remove one record)")
            }
            Guarantee::Paper => format!("{NOT_DP} (the paper's algorithm as printed, docs/ipa.md)"),
        }
    }

    /// `guarantee=` and `delta=` as given (`None` when absent); `allowed` lists the modes the
    /// function offers, `default` is used without `guarantee=`.
    pub(crate) fn parse(
        function: &str,
        guarantee: Option<&str>,
        delta: Option<&str>,
        allowed: &[&str],
        default: Guarantee,
    ) -> Result<Guarantee> {
        let name = guarantee.map(|g| g.trim().to_ascii_lowercase());
        let chosen = match name.as_deref() {
            None => default,
            Some(g) if !allowed.contains(&g) => {
                return Err(AnonError::argument(
                    function,
                    "guarantee",
                    format!("unknown guarantee '{g}' ({})", allowed.join(", ")),
                ));
            }
            Some("pure") => Guarantee::Pure,
            Some("approx") => Guarantee::Approx { delta: DEFAULT_DELTA },
            Some(_) => Guarantee::Paper,
        };
        match (chosen, delta) {
            (_, None) => Ok(chosen),
            (Guarantee::Approx { .. }, Some(d)) => {
                let delta: f64 = d
                    .trim()
                    .parse()
                    .map_err(|_| AnonError::argument(function, "delta", format!("'{d}' is not a number")))?;
                if !(delta > 0.0 && delta < 1.0) {
                    return Err(AnonError::argument(function, "delta", format!("must be in (0, 1), got {delta}")));
                }
                Ok(Guarantee::Approx { delta })
            }
            (g, Some(_)) => Err(AnonError::argument(
                function,
                "delta",
                format!("applies to guarantee=approx only (this call is guarantee={})", g.name()),
            )),
        }
    }
}

/// The publication threshold τ of the stability-based histogram: the smallest τ ≥ 1 with
/// P(1 + X ≥ τ) = q^(τ−1)/(1 + q) ≤ δ for the discrete Laplace X of `noise` (q = e^−ε′), so
/// a cell that exists only because of one record is published with probability at most δ
/// (docs/dp.md, "approx"). q is rounded up before the check, so τ is never too small.
pub(crate) fn threshold(noise: &DiscreteLaplace, delta: f64) -> u64 {
    let q = noise.q() * (1.0 + 1e-12);
    let tail = |k: u64| q.powf(k as f64) / (1.0 + noise.q() * (1.0 - 1e-12));
    let mut k = ((delta * (1.0 + noise.q())).ln() / q.ln()).ceil().max(0.0) as u64;
    while k > 0 && tail(k - 1) <= delta {
        k -= 1;
    }
    while tail(k) > delta {
        k += 1;
    }
    k + 1
}

/// Default of [`floor`]'s probability: an empty cell of a `pure` histogram is published with
/// probability at most 1/20 (measured on the NPS-like table, docs/results/ipa.md).
pub(crate) const DEFAULT_FLOOR_PROBABILITY: f64 = 0.05;

/// The publication floor of a `pure` histogram: the smallest T ≥ 1 with
/// P(X ≥ T) = q^T/(1 + q) ≤ `p` for the discrete Laplace X of `noise` (q = e^−ε′), i.e. an
/// empty cell is published with probability at most `p`. It depends only on the public noise
/// scale and `p`, never on the data, and it is applied to the noisy counts only: ε-DP is
/// untouched (post-processing; docs/dp.md). `p` ≥ 1/(1 + q) gives T = 1, plain max(0, c + X).
pub(crate) fn floor(noise: &DiscreteLaplace, p: f64) -> u64 {
    let q = noise.q();
    let mut t = 1u64;
    while t < 1_000_000 && q.powf(t as f64) / (1.0 + q) > p {
        t += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_is_the_smallest_with_the_tail_below_delta() {
        for (eps, delta) in [(1.0, 1e-9), (0.5, 1e-6), (2.0, 0.1), (0.9, 1e-9), (5.0, 0.5)] {
            let noise = DiscreteLaplace::for_epsilon(eps, 1).unwrap();
            let tau = threshold(&noise, delta);
            let q = noise.q();
            let tail = |k: u64| q.powf(k as f64) / (1.0 + q);
            assert!(tail(tau - 1) <= delta, "{eps} {delta}: tau {tau}");
            assert!(tau == 1 || tail(tau - 2) > delta * (1.0 - 1e-9), "{eps} {delta}: tau {tau} not smallest");
        }
    }

    #[test]
    fn floor_is_the_smallest_with_the_empty_cell_probability_below_p() {
        for (eps, p, want) in [(0.8, 0.05, 4), (1.0, 0.05, 3), (0.8, 0.5, 1), (0.8, 0.2, 2), (0.1, 0.05, 24)] {
            let noise = DiscreteLaplace::for_epsilon(eps, 1).unwrap();
            let q = noise.q();
            let t = floor(&noise, p);
            assert_eq!(t, want, "eps {eps} p {p}");
            assert!(q.powf(t as f64) / (1.0 + q) <= p);
            assert!(t == 1 || q.powf((t - 1) as f64) / (1.0 + q) > p);
        }
    }

    #[test]
    fn parse_refuses_bad_delta_and_unknown_modes() {
        let all = ["pure", "approx", "paper"];
        let p = |g: Option<&str>, d: Option<&str>| Guarantee::parse("f", g, d, &all, Guarantee::Pure);
        assert_eq!(p(None, None).unwrap(), Guarantee::Pure);
        assert_eq!(p(Some("approx"), Some("1e-6")).unwrap(), Guarantee::Approx { delta: 1e-6 });
        assert_eq!(p(Some("APPROX"), None).unwrap(), Guarantee::Approx { delta: DEFAULT_DELTA });
        for (g, d, needle) in [
            (Some("approx"), Some("0"), "delta"),
            (Some("approx"), Some("1"), "delta"),
            (Some("approx"), Some("-1e-3"), "delta"),
            (Some("approx"), Some("x"), "delta"),
            (Some("pure"), Some("1e-9"), "delta"),
            (Some("paper"), Some("1e-9"), "delta"),
            (Some("strong"), None, "guarantee"),
        ] {
            let e = p(g, d).unwrap_err().to_string();
            assert!(e.contains(needle), "{g:?} {d:?}: {e}");
        }
        let e = Guarantee::parse("f", Some("paper"), None, &["pure", "approx"], Guarantee::Pure).unwrap_err();
        assert!(e.to_string().contains("guarantee"));
    }
}
