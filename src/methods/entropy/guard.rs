//! The privacy guard of a Q-block: entropy l-diversity and/or t-closeness besides its k
//! records, with kanon_anonymize's models ([`crate::methods::kanon::models`]). The guarded
//! clustering that consults it is [`super::guarded`]; it lives apart so that the clustering
//! (cluster.rs) can hold a guard without importing the code that extends it (they were a
//! circle).

use super::state::State;
use crate::formulas::entropy::entropy_bits;
use crate::methods::kanon::models::{Models, SensitiveContext, class_ok};

/// The privacy models every Q-block must satisfy besides its k records.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    models: Models,
    /// The same models with k = 1: does a block of any size satisfy them?
    any_size: Models,
    ctx: SensitiveContext,
    values: usize,
}

impl Guard {
    /// `models` against the distribution of the sensitive attribute over the whole table.
    pub(crate) fn new(models: Models, state: &State, values: &[String]) -> Self {
        let mut counts = vec![0u64; values.len()];
        for row in 0..state.rows() {
            counts[state.z[row] as usize] += state.counts[row];
        }
        let any_size = Models { k: 1, ..models.clone() };
        Guard { ctx: SensitiveContext::new(values, &counts), models, any_size, values: values.len() }
    }

    /// Does a block of `size` records with sensitive histogram `hist` satisfy every model, k
    /// included?
    pub(crate) fn holds(&self, hist: &[u32], size: u64) -> bool {
        class_ok(&self.models, size, Some(hist), Some(&self.ctx))
    }

    /// How far the block is from the models, k aside: 0 when they hold.
    fn shortfall(&self, hist: &[u32], size: u64) -> f64 {
        let mut s = 0.0;
        if let Some(l) = self.models.entropy_l {
            let nats = entropy_bits(hist.iter().map(|&c| c as u64), size) * std::f64::consts::LN_2;
            s += (l.ln() - nats).max(0.0);
        }
        if let Some(t) = self.models.t {
            s += (self.ctx.emd(hist, size) - t).max(0.0);
        }
        s
    }

    /// Which sensitive values a block may take next: those that keep the models holding (k
    /// aside) or bring the block strictly closer to them; under t-closeness also any value the
    /// block holds less of than the whole table (p_z < q_z). A small block often cannot come
    /// strictly closer in one record (every value overshoots), but filling it with
    /// under-represented values makes its distribution converge to the table's.
    pub(super) fn wanted(&self, hist: &mut [u32], size: u64) -> Vec<bool> {
        let before = self.shortfall(hist, size);
        (0..self.values)
            .map(|z| {
                let under = self.models.t.is_some() && (hist[z] as f64) < self.ctx.global[z] * size as f64;
                hist[z] += 1;
                let ok = under
                    || class_ok(&self.any_size, size + 1, Some(&*hist), Some(&self.ctx))
                    || self.shortfall(hist, size + 1) < before - 1e-12;
                hist[z] -= 1;
                ok
            })
            .collect()
    }

    /// The sensitive histogram and size of some records.
    pub(crate) fn histogram(&self, state: &State, members: &[(u32, u64)]) -> (Vec<u32>, u64) {
        let mut hist = vec![0u32; self.values];
        for &(row, c) in members {
            hist[state.z[row as usize] as usize] += c as u32;
        }
        (hist, members.iter().map(|m| m.1).sum())
    }

    pub(crate) fn describe(&self) -> String {
        self.models.describe()
    }
}
