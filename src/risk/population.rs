//! Population uniqueness: how many records of the population are unique on the
//! quasi-identifiers, estimated from the sample's class-size histogram and the population size
//! N (sampling fraction f = n/N). The formulas, their sources and ARX's deviations from the
//! papers (which these follow, so that the numbers match) are in docs/risk.md.

use super::Histogram;
use super::solver::{Pair, System, solve};
use super::special::{digamma, ln_gamma, trigamma};

/// Which model Dankar et al.'s rule picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Model {
    Pitman,
    Zayatz,
    Snb,
    /// No sample uniques: every model says 0.
    None,
}

impl Model {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Model::Pitman => "Pitman",
            Model::Zayatz => "Zayatz",
            Model::Snb => "SNB",
            Model::None => "none (no sample uniques)",
        }
    }
}

/// The estimates, as numbers of population uniques; None where a model has no estimate
/// (its equations have no admissible root).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Uniqueness {
    pub(crate) pitman: Option<f64>,
    pub(crate) zayatz: Option<f64>,
    pub(crate) snb: Option<f64>,
    pub(crate) dankar: f64,
    pub(crate) chosen: Model,
}

/// All three models and Dankar et al.'s choice for a population of `population` records.
pub(crate) fn uniqueness(h: &Histogram, population: f64) -> Uniqueness {
    if h.count_of(1) == 0 {
        return Uniqueness { pitman: Some(0.0), zayatz: Some(0.0), snb: Some(0.0), dankar: 0.0, chosen: Model::None };
    }
    let valid = |v: f64| (v.is_finite() && v != 0.0).then_some(v);
    let pitman = valid(pitman(h, population));
    let zayatz = valid(zayatz(h, population));
    let snb = valid(snb(h, population));
    let (dankar, chosen) = dankar(h.records() / population, pitman, zayatz, snb);
    Uniqueness { pitman, zayatz, snb, dankar, chosen }
}

/// Dankar, El Emam, Neisa & Roffey (2012): Pitman for f ≤ 0.1; above, the smaller of Zayatz
/// and SNB (Zayatz where SNB has no estimate).
fn dankar(f: f64, pitman: Option<f64>, zayatz: Option<f64>, snb: Option<f64>) -> (f64, Model) {
    let z = (zayatz.unwrap_or(0.0), Model::Zayatz);
    if f <= 0.1 {
        return pitman.map_or(z, |p| (p, Model::Pitman));
    }
    match snb {
        Some(s) if s <= z.0 => (s, Model::Snb),
        _ => z,
    }
}

/// Zayatz (1991): the share of sample uniques that are population uniques is
/// P(unique | size 1) = (c₁/u)·P₁ / Σ_s (c_s/u)·P_s with P_s the hypergeometric probability
/// that a population class of size s yields exactly one of n draws from N; the estimate is
/// c₁ · that share / f. P_s/P₁ = s·Π_{j=1}^{s−1} (N−n+1−j)/(N−j), a product of ratios that
/// neither overflows nor cancels. N is truncated to an integer as ARX's hypergeometric does.
pub(crate) fn zayatz(h: &Histogram, population: f64) -> f64 {
    let n_pop = population.floor();
    let n = h.records();
    let relative = |s: u64| -> f64 {
        let mut p = s as f64;
        for j in 1..s {
            let j = j as f64;
            p *= ((n_pop - n + 1.0 - j) / (n_pop - j)).max(0.0);
            if p == 0.0 {
                break;
            }
        }
        p
    };
    let c1 = h.count_of(1) as f64;
    let denominator: f64 = h.iter().map(|(s, c)| c as f64 * relative(s)).sum();
    let share = c1 / denominator;
    c1 * share / (n / population)
}

/// Pitman's sampling formula (Hoshino 2001): θ and α solve the likelihood equations
///   Σ_{i=1}^{u−1} 1/(θ+iα) − Σ_{i=1}^{n−1} 1/(θ+i) = 0,
///   Σ_{i=1}^{u−1} i/(θ+iα) − Σ_s c_s Σ_{j=1}^{s−1} 1/(j−α) = 0,
/// and the population uniques are Γ(θ+1)/Γ(θ+α) · N^α.
pub(crate) fn pitman(h: &Histogram, population: f64) -> f64 {
    let system = Pitman { h, u: h.classes(), n: h.records() };
    let Some((theta, alpha)) = solve(&system, system.moment_start()) else {
        return f64::NAN;
    };
    if alpha == 0.0 {
        return f64::NAN;
    }
    let estimate = (ln_gamma(theta + 1.0) - ln_gamma(theta + alpha) + alpha * population.ln()).exp();
    if (0.0..=population).contains(&estimate) { estimate } else { f64::NAN }
}

struct Pitman<'a> {
    h: &'a Histogram,
    u: f64,
    n: f64,
}

impl Pitman<'_> {
    /// The moment-based start ARX takes from the paper.
    fn moment_start(&self) -> Pair {
        let (u, n) = (self.u, self.n);
        let c1 = self.h.count_of(1) as f64;
        let c2 = match self.h.count_of(2) {
            0 => 1.0,
            c => c as f64,
        };
        let c = c1 * (c1 - 1.0) / c2;
        let theta = (n * u * c - c1 * (n - 1.0) * (2.0 * u + c)) / (2.0 * c1 * u + c1 * c - n * c);
        let alpha = (theta * (c1 - n) + (n - 1.0) * c1) / (n * u);
        (theta, alpha)
    }

    /// Σ_{i=1}^{u−1} 1/(θ+iα) and Σ 1/(θ+iα)², by ψ and ψ₁ at θ/α + 1 and θ/α + u.
    fn class_sums(&self, theta: f64, alpha: f64) -> (f64, f64) {
        let r = theta / alpha;
        let s1 = (digamma(r + self.u) - digamma(r + 1.0)) / alpha;
        let s2 = (trigamma(r + 1.0) - trigamma(r + self.u)) / (alpha * alpha);
        (s1, s2)
    }
}

impl System for Pitman<'_> {
    fn value(&self, (theta, alpha): Pair) -> Pair {
        let (s1, _) = self.class_sums(theta, alpha);
        let records = digamma(theta + self.n) - digamma(theta + 1.0);
        // Σ i/(θ+iα) = ((u−1) − θ·Σ 1/(θ+iα)) / α
        let weighted = ((self.u - 1.0) - theta * s1) / alpha;
        let within: f64 = self
            .h
            .iter()
            .filter(|&(s, _)| s > 1)
            .map(|(s, c)| c as f64 * (digamma(s as f64 - alpha) - digamma(1.0 - alpha)))
            .sum();
        (s1 - records, weighted - within)
    }

    fn jacobian(&self, (theta, alpha): Pair) -> [Pair; 2] {
        let (s1, s2) = self.class_sums(theta, alpha);
        let weighted = ((self.u - 1.0) - theta * s1) / alpha;
        // Σ i/(θ+iα)² and Σ i²/(θ+iα)², from i = ((θ+iα) − θ)/α.
        let t1 = (s1 - theta * s2) / alpha;
        let t2 = (weighted - theta * t1) / alpha;
        let records = trigamma(theta + 1.0) - trigamma(theta + self.n);
        let within: f64 = self
            .h
            .iter()
            .filter(|&(s, _)| s > 1)
            .map(|(s, c)| c as f64 * (trigamma(1.0 - alpha) - trigamma(s as f64 - alpha)))
            .sum();
        [(records - s2, -t1), (-t1, -t2 - within)]
    }

    fn admissible(&self, (theta, _): Pair) -> bool {
        theta >= 0.0
    }
}

/// The SNB model (Chen & Keller-McNulty 1998): class sizes negative binomial with shape α and
/// probability β over K population classes; K is estimated from the sample, α and β solve
/// E[c₁] = c₁ and E[c₂] = c₂, and the population uniques are K·β^α.
pub(crate) fn snb(h: &Histogram, population: f64) -> f64 {
    let f = h.records() / population;
    let c1 = h.count_of(1) as f64;
    let c2 = h.count_of(2) as f64;
    let k = snb_classes(h, f);
    let system = Snb { k, f, c1, c2 };
    match solve(&system, (1.0, 1.0)) {
        Some((alpha, beta)) => k * beta.powf(alpha),
        None => f64::NAN,
    }
}

/// The estimate of K, the population's non-empty classes, as ARX computes it (docs/risk.md).
fn snb_classes(h: &Histogram, f: f64) -> f64 {
    let (mut v1, mut v2, mut v3, mut v4) = (0.0, 0.0, 0.0, 0.0);
    for (s, c) in h.iter() {
        let (s, c) = (s as f64, c as f64);
        let kept = (1.0 - f).powf(s) * c;
        v1 += s * f * f * (1.0 - f * f).powf(s - 1.0) * c;
        v2 += kept * (1.0 + f).powf(s) - 1.0;
        v3 += kept;
        v4 += s * f * (1.0 - f).powf(s - 1.0) * c;
    }
    h.classes() + h.count_of(1) as f64 * (v1 / v2) * (v3 / v4) * (v3 / v4)
}

struct Snb {
    k: f64,
    f: f64,
    c1: f64,
    c2: f64,
}

impl Snb {
    /// E[c₂] as the paper writes it, with (1−d)^(α+2) dividing; its derivatives are the
    /// Jacobian ARX's solver steps with (see [`System::value`]).
    fn pairs_divided(&self, (a, b): Pair) -> f64 {
        let d = (1.0 - self.f) * (1.0 - b);
        self.k * a * b.powf(a) * self.f * self.f * (1.0 - b) * (2.0 - (1.0 - a) * d) / (2.0 * (1.0 - d).powf(a + 2.0))
    }

    fn uniques(&self, (a, b): Pair) -> f64 {
        let d = (1.0 - self.f) * (1.0 - b);
        self.k * self.f * (b / (1.0 - d)).powf(a) * (a * d / (1.0 - d) + 1.0)
    }
}

impl System for Snb {
    /// E[c₁] − c₁ and E[c₂] − c₂, E[c₂] as ARX evaluates it: (1−d)^(α+2) multiplying.
    fn value(&self, (a, b): Pair) -> Pair {
        let d = (1.0 - self.f) * (1.0 - b);
        let pairs = self.k * a * b.powf(a) * self.f * self.f * (1.0 - b) / 2.0
            * (1.0 - d).powf(a + 2.0)
            * (2.0 - (1.0 - a) * d);
        (self.uniques((a, b)) - self.c1, pairs - self.c2)
    }

    /// Central differences: ∂E[c₁] and ∂E[c₂] (divided form) to ~1e-9 relative.
    fn jacobian(&self, at: Pair) -> [Pair; 2] {
        let partial = |g: &dyn Fn(Pair) -> f64| -> Pair {
            let hx = 1e-6 * at.0.abs().max(1e-3);
            let hy = 1e-6 * at.1.abs().max(1e-3);
            (
                (g((at.0 + hx, at.1)) - g((at.0 - hx, at.1))) / (2.0 * hx),
                (g((at.0, at.1 + hy)) - g((at.0, at.1 - hy))) / (2.0 * hy),
            )
        };
        [partial(&|p| self.uniques(p)), partial(&|p| self.pairs_divided(p))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The likelihood equations by their sums, term by term (no ψ, no ψ₁).
    fn pitman_sums(h: &Histogram, (theta, alpha): Pair) -> Pair {
        let u = h.classes() as u64;
        let n = h.records() as u64;
        let g1: f64 = (1..u).map(|i| 1.0 / (theta + i as f64 * alpha)).sum::<f64>()
            - (1..n).map(|i| 1.0 / (theta + i as f64)).sum::<f64>();
        let within: f64 = h.iter().map(|(s, c)| c as f64 * (1..s).map(|j| 1.0 / (j as f64 - alpha)).sum::<f64>()).sum();
        let g2 = (1..u).map(|i| i as f64 / (theta + i as f64 * alpha)).sum::<f64>() - within;
        (g1, g2)
    }

    fn histogram() -> Histogram {
        Histogram::from_sizes([1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 7, 9, 12, 1, 1, 2])
    }

    #[test]
    fn pitman_closed_forms_equal_the_sums() {
        let h = histogram();
        let system = Pitman { h: &h, u: h.classes(), n: h.records() };
        for at in [(0.5, 0.2), (3.0, 0.6), (10.0, -0.3), (0.1, 0.9)] {
            let (a, b) = (system.value(at), pitman_sums(&h, at));
            assert!((a.0 - b.0).abs() < 1e-10 && (a.1 - b.1).abs() < 1e-10, "{at:?}: {a:?} vs {b:?}");
            // The Jacobian against central differences of the sums.
            let e = 1e-6;
            let j = system.jacobian(at);
            let d_theta = |k: usize| {
                let (p, m) = (pitman_sums(&h, (at.0 + e, at.1)), pitman_sums(&h, (at.0 - e, at.1)));
                [(p.0 - m.0) / (2.0 * e), (p.1 - m.1) / (2.0 * e)][k]
            };
            let d_alpha = |k: usize| {
                let (p, m) = (pitman_sums(&h, (at.0, at.1 + e)), pitman_sums(&h, (at.0, at.1 - e)));
                [(p.0 - m.0) / (2.0 * e), (p.1 - m.1) / (2.0 * e)][k]
            };
            for (got, want) in [(j[0].0, d_theta(0)), (j[0].1, d_alpha(0)), (j[1].0, d_theta(1)), (j[1].1, d_alpha(1))]
            {
                assert!((got - want).abs() < 1e-5 * want.abs().max(1.0), "{at:?}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn pitman_s_estimate_solves_its_equations() {
        let h = histogram();
        let system = Pitman { h: &h, u: h.classes(), n: h.records() };
        let root = solve(&system, system.moment_start()).expect("a root");
        let (g1, g2) = pitman_sums(&h, root);
        assert!(g1.abs() < 1e-9 && g2.abs() < 1e-9, "{root:?}: {g1}, {g2}");
        let estimate = pitman(&h, 1000.0);
        assert!(estimate > 0.0 && estimate <= 1000.0, "{estimate}");
    }
}
