//! Whether a group of frequency rows may be published as one class, for the local methods
//! ([`super::local`], [`super::mondrian`]), which build classes row by row rather than node by
//! node: its size and, when a model reads the sensitive attribute, its sensitive histogram.

use super::models::{Models, SensitiveContext, class_ok};
use crate::encode::FrequencyTable;

/// The models and what they need of the table.
pub(crate) struct Judge<'a> {
    ft: &'a FrequencyTable,
    models: &'a Models,
    sensitive: Option<SensitiveContext>,
}

/// A group of records: its size and (when the models read it) its sensitive histogram.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    pub(crate) size: u64,
    hist: Vec<u32>,
}

impl Tally {
    pub(crate) fn add(&mut self, other: &Tally) {
        self.size += other.size;
        if self.hist.len() < other.hist.len() {
            self.hist.resize(other.hist.len(), 0);
        }
        for (h, o) in self.hist.iter_mut().zip(&other.hist) {
            *h += o;
        }
    }
    /// Take out `other`, a part of this group.
    pub(crate) fn sub(&mut self, other: &Tally) {
        self.size -= other.size;
        for (h, o) in self.hist.iter_mut().zip(&other.hist) {
            *h -= o;
        }
    }
}

impl<'a> Judge<'a> {
    pub(crate) fn new(ft: &'a FrequencyTable, models: &'a Models) -> Self {
        let sensitive = ft.sensitive.as_ref().filter(|_| models.need_sensitive()).map(|s| {
            let counts = s.codes.iter().zip(&ft.counts).fold(vec![0u64; s.values.len()], |mut acc, (&v, &n)| {
                acc[v as usize] += n;
                acc
            });
            SensitiveContext::new(&s.values, &counts)
        });
        Judge { ft, models, sensitive }
    }

    /// The tally of one frequency row.
    pub(crate) fn row(&self, r: usize) -> Tally {
        let n = self.ft.counts[r];
        let hist = match (&self.sensitive, &self.ft.sensitive) {
            (Some(_), Some(s)) => {
                let mut h = vec![0u32; s.values.len()];
                h[s.codes[r] as usize] = u32::try_from(n).unwrap_or(u32::MAX);
                h
            }
            _ => Vec::new(),
        };
        Tally { size: n, hist }
    }

    /// Does a group satisfy every model?
    pub(crate) fn ok(&self, t: &Tally) -> bool {
        let hist = self.sensitive.as_ref().map(|_| t.hist.as_slice());
        class_ok(self.models, t.size, hist, self.sensitive.as_ref())
    }
}
