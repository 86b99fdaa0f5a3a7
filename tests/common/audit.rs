//! The neighbouring-table audit's arithmetic, shared by tests/dp_audit.rs (library calls) and
//! tests/dp_own_table.rs (SQL calls): event frequencies on D and D′ and the likelihood-ratio
//! check P_D(E) ≤ e^ε P_D′(E) + δ in both directions, up to sampling error.

use std::collections::BTreeMap;

/// Width of the sampling tolerance (Wilson score interval).
const Z: f64 = 4.5;

/// Wilson score interval of k successes in n.
fn wilson(k: u64, n: u64) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Frequencies of named events over the runs on D and on D′.
#[derive(Default)]
pub struct Tally {
    d: BTreeMap<String, u64>,
    d2: BTreeMap<String, u64>,
}

impl Tally {
    pub fn add(&mut self, on_d: bool, events: Vec<String>) {
        let m = if on_d { &mut self.d } else { &mut self.d2 };
        for e in events {
            *m.entry(e).or_default() += 1;
        }
    }

    /// How often `event` occurred on D (`on_d`) or on D′.
    pub fn count(&self, on_d: bool, event: &str) -> u64 {
        let m = if on_d { &self.d } else { &self.d2 };
        m.get(event).copied().unwrap_or(0)
    }

    /// Events violating P_D(E) ≤ e^ε P_D′(E) + δ (either direction) beyond sampling error,
    /// over `runs` runs on each table.
    pub fn violations_in(&self, runs: u64, what: &str, epsilon: f64, delta: f64) -> Vec<String> {
        let keys: std::collections::BTreeSet<&String> = self.d.keys().chain(self.d2.keys()).collect();
        let mut out = Vec::new();
        for k in keys {
            let (a, b) = (self.d.get(k).copied().unwrap_or(0), self.d2.get(k).copied().unwrap_or(0));
            let (wa, wb) = (wilson(a, runs), wilson(b, runs));
            let bad = wa.0 > epsilon.exp() * wb.1 + delta || wb.0 > epsilon.exp() * wa.1 + delta;
            eprintln!("{what}: {k}: D {a}/{runs}, D' {b}/{runs}{}", if bad { "  VIOLATION" } else { "" });
            if bad {
                out.push(format!("{k}: {a} vs {b}"));
            }
        }
        out
    }
}
