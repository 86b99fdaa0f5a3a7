//! The counts behind the distance d = H(X|Y) + I(Y;Z) (Eqs. 6–8) on the table as it is being
//! generalized, and the change in N·d when two records are generalized together.
//!
//! The table being scored is the paper's Table 4: every record carries a label per
//! quasi-identifier (its own leaf, or the node its Q-block was generalized to), X is the
//! original value, Y the label (for I, the tuple of labels) and Z the sensitive value. With
//! f(c) = c·log₂c and counts c over the N records,
//!
//! - N·H(X_a|Y_a) = Σ_y [f(c_y) − Σ_x f(c_xy)]; a leaf label y = x has c_y = c_xy, so only
//!   generalized labels contribute;
//! - N·I(Y;Z) = N·H(Z) − Σ_Y W(Y), W(Y) = f(c_Y) − Σ_z f(c_Yz) (= c_Y·H(Z|Y)).
//!
//! Generalizing records changes a handful of counts, so the change of N·d is a short sum of
//! f-differences over the labels and tuples involved, never a pass over the table. Every term
//! is a table lookup of f at an integer count and the terms are added in a fixed order, so the
//! same counts always give the same bits; the pair key is built symmetrically in its two records.

use super::block::{Block, Label};
use crate::encode::FrequencyTable;
use crate::encode::hash::{FastMap, fast_map};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use std::sync::Arc;

/// f(c) = c·log₂c for every count the table can reach (f(0) = f(1) = 0).
#[derive(Debug, Clone)]
pub(crate) struct FLog(Vec<f64>);

impl FLog {
    pub(crate) fn new(n: u64) -> Self {
        FLog((0..=n + 2).map(|c| if c < 2 { 0.0 } else { c as f64 * (c as f64).log2() }).collect())
    }
    #[inline]
    pub(crate) fn f(&self, c: u64) -> f64 {
        self.0[c as usize]
    }
    /// f(c + δ) − f(c).
    #[inline]
    pub(crate) fn step(&self, c: u64, delta: i64) -> f64 {
        self.f(c.wrapping_add_signed(delta)) - self.f(c)
    }
}

/// Counts of one quasi-identifier's labels.
#[derive(Debug, Clone)]
pub(crate) struct AttrCounts {
    pub(crate) h: Arc<Hierarchy>,
    /// Index of level j's first node among all nodes of the hierarchy.
    offset: Vec<u32>,
    /// c_y of generalized labels, by node index (leaf entries unused: see `joint`).
    label: Vec<u64>,
    /// c_xy by (leaf x, level j) with y = x's ancestor at level j; level 0 is the leaf label,
    /// whose c_y equals c_xy.
    joint: Vec<u64>,
}

impl AttrCounts {
    fn new(h: Arc<Hierarchy>) -> Self {
        let mut offset = vec![0u32];
        for j in 0..h.height() {
            offset.push(offset[j] + h.width(j) as u32);
        }
        let nodes = offset[h.height()] as usize + h.width(h.height());
        let joint = vec![0; h.leaf_count() * (h.height() + 1)];
        AttrCounts { h, offset, label: vec![0; nodes], joint }
    }
    pub(crate) fn nodes(&self) -> usize {
        self.label.len()
    }
    #[inline]
    pub(crate) fn node(&self, (j, code): Label) -> u32 {
        self.offset[j as usize] + code
    }
    #[inline]
    fn ji(&self, x: u32, j: u8) -> usize {
        x as usize * (self.h.height() + 1) + j as usize
    }
    #[inline]
    pub(crate) fn joint(&self, x: u32, j: u8) -> u64 {
        self.joint[self.ji(x, j)]
    }
    /// Records labelled `y` (leaf or not).
    #[inline]
    pub(crate) fn label_count(&self, x: u32, y: Label) -> u64 {
        if y.0 == 0 { self.joint(x, 0) } else { self.label[self.node(y) as usize] }
    }
    /// The closest common ancestor of two leaves.
    pub(crate) fn cca(&self, a: u32, b: u32) -> Label {
        (0..=self.h.height())
            .map(|j| (j as u8, self.h.up(j)[a as usize], self.h.up(j)[b as usize]))
            .find(|t| t.1 == t.2)
            .map_or((0, a), |t| (t.0, t.1))
    }
    /// The closest common ancestor of a label and a leaf.
    pub(crate) fn widen(&self, y: Label, x: u32) -> Label {
        let mut node = y;
        for j in y.0 as usize..=self.h.height() {
            if self.h.up(j)[x as usize] == node.1 {
                return (j as u8, node.1);
            }
            if j < self.h.height() {
                node = (j as u8 + 1, self.h.parent(j, node.1));
            }
        }
        (self.h.height() as u8, 0)
    }
    /// Move `c` records of leaf `x` from label `from` to label `to`.
    fn relabel(&mut self, x: u32, c: u64, from: Label, to: Label) {
        if from == to {
            return;
        }
        for (y, sign) in [(from, -1i64), (to, 1)] {
            if y.0 > 0 {
                let n = self.node(y) as usize;
                self.label[n] = self.label[n].wrapping_add_signed(sign * c as i64);
            }
            let i = self.ji(x, y.0);
            self.joint[i] = self.joint[i].wrapping_add_signed(sign * c as i64);
        }
    }
    /// N·H(X|Y) from scratch.
    fn n_entropy(&self, f: &FLog) -> f64 {
        let leaves = self.h.width(0);
        let labels: f64 = self.label[leaves..].iter().map(|&c| f.f(c)).sum();
        let joints: f64 =
            self.joint.iter().enumerate().filter(|(i, _)| i % (self.h.height() + 1) > 0).map(|(_, &c)| f.f(c)).sum();
        labels - joints
    }
}

/// Records and sensitive histogram of one generalized label tuple.
#[derive(Debug, Clone, Default)]
pub(crate) struct TupleCounts {
    pub(crate) total: u64,
    /// (sensitive code, records), sorted by code.
    by_z: Vec<(u32, u64)>,
}

impl TupleCounts {
    pub(crate) fn z(&self, z: u32) -> u64 {
        self.by_z.binary_search_by_key(&z, |e| e.0).map_or(0, |i| self.by_z[i].1)
    }
    fn add(&mut self, z: u32, c: i64) {
        self.total = self.total.wrapping_add_signed(c);
        match self.by_z.binary_search_by_key(&z, |e| e.0) {
            Ok(i) => self.by_z[i].1 = self.by_z[i].1.wrapping_add_signed(c),
            Err(i) => self.by_z.insert(i, (z, c as u64)),
        }
    }
}

/// ΔW of a tuple holding `total` records when its sensitive counts change by `changes`
/// (sorted by code, merged); `count(z)` reads the current count of value z.
pub(crate) fn delta_w(f: &FLog, total: u64, count: impl Fn(u32) -> u64, changes: &[(u32, i64)]) -> f64 {
    let dt: i64 = changes.iter().map(|c| c.1).sum();
    let mut dz = 0.0;
    for &(z, d) in changes {
        dz += f.step(count(z), d);
    }
    f.step(total, dt) - dz
}

/// The generalization state of a frequency table: every record's labels, as counts.
#[derive(Debug, Clone)]
pub struct State {
    pub(crate) f: FLog,
    pub(crate) attrs: Vec<AttrCounts>,
    /// Leaf codes, row-major (row × attribute).
    codes: Vec<u32>,
    pub(crate) z: Vec<u32>,
    pub(crate) counts: Vec<u64>,
    /// Mixed-radix weights turning a label tuple into one u128 key.
    radix: Vec<u128>,
    /// Leaf-tuple id of each row (rows with the same quasi-identifiers share it).
    pub(crate) tid: Vec<u32>,
    /// Records labelled with each leaf tuple.
    pub(crate) tuple_leaf: Vec<u64>,
    /// Records labelled with their leaf tuple, per (leaf tuple, sensitive value): c_{Y,z}. It
    /// is kept at the first row of each run of equal rows (`slot`), so a frequency table
    /// assembled with repeated rows counts right too.
    pub(crate) at_leaf: Vec<u64>,
    pub(crate) slot: Vec<u32>,
    leaf_tid: FastMap<u128, u32>,
    /// Rows of each leaf tuple: a contiguous range, as the frequency table is sorted by its
    /// quasi-identifiers first.
    pub(crate) tid_rows: Vec<(u32, u32)>,
    /// Tuples with at least one generalized label.
    pub(crate) general: FastMap<u128, TupleCounts>,
    /// Records per sensitive value.
    z_totals: Vec<u64>,
    pub(crate) n: u64,
    /// Score I(Y;Z) too (the paper's d), or H(X|Y) alone (its CE baseline).
    pub(crate) with_mi: bool,
}

impl State {
    /// Every record at its own leaves: H(X|Y) = 0 and I(Y;Z) = I(X;Z).
    pub fn new(ft: &FrequencyTable, with_mi: bool) -> Result<Self> {
        let sens = ft.declared_sensitive("source")?;
        let m = ft.qis.len();
        let mut attrs: Vec<AttrCounts> = ft.qis.iter().map(|q| AttrCounts::new(q.hierarchy.clone())).collect();
        let mut radix = Vec::with_capacity(m);
        let mut r: u128 = 1;
        for a in &attrs {
            radix.push(r);
            r = r.checked_mul(a.nodes() as u128).ok_or_else(|| {
                AnonError::argument(
                    "entropy_anonymize",
                    "source",
                    "its quasi-identifiers' hierarchies have too many nodes together for a 128-bit label key",
                )
            })?;
        }
        let codes: Vec<u32> = (0..ft.len()).flat_map(|row| ft.qis.iter().map(move |q| q.codes[row])).collect();
        let (mut tid, mut tuple_leaf, mut leaf_tid) = (Vec::with_capacity(ft.len()), Vec::new(), fast_map(ft.len()));
        let mut tid_rows: Vec<(u32, u32)> = Vec::new();
        let mut z_totals = vec![0u64; sens.values.len()];
        for row in 0..ft.len() {
            let c = ft.counts[row];
            let xs = &codes[row * m..(row + 1) * m];
            let key: u128 = xs.iter().zip(&radix).map(|(&x, &w)| x as u128 * w).sum();
            let id = *leaf_tid.entry(key).or_insert_with(|| {
                tuple_leaf.push(0);
                tid_rows.push((row as u32, row as u32));
                tuple_leaf.len() as u32 - 1
            });
            if tid_rows[id as usize].1 != row as u32 {
                return Err(AnonError::table("source", "frequency table is not sorted by its quasi-identifiers"));
            }
            tid_rows[id as usize].1 = row as u32 + 1;
            tid.push(id);
            tuple_leaf[id as usize] += c;
            z_totals[sens.codes[row] as usize] += c;
            for (a, &x) in xs.iter().enumerate() {
                let i = attrs[a].ji(x, 0);
                attrs[a].joint[i] += c;
            }
        }
        let n = ft.total();
        let mut slot: Vec<u32> = Vec::with_capacity(ft.len());
        let mut at_leaf = vec![0u64; ft.len()];
        for row in 0..ft.len() {
            let same = row > 0 && tid[row] == tid[row - 1] && sens.codes[row] == sens.codes[row - 1];
            slot.push(if same { slot[row - 1] } else { row as u32 });
            at_leaf[slot[row] as usize] += ft.counts[row];
        }
        Ok(State {
            f: FLog::new(n),
            attrs,
            codes,
            z: sens.codes.clone(),
            counts: ft.counts.clone(),
            radix,
            tid,
            tuple_leaf,
            at_leaf,
            slot,
            leaf_tid,
            tid_rows,
            general: fast_map(1024),
            z_totals,
            n,
            with_mi,
        })
    }

    pub(crate) fn rows(&self) -> usize {
        self.counts.len()
    }
    pub(crate) fn attributes(&self) -> usize {
        self.attrs.len()
    }
    #[inline]
    pub(crate) fn leaves(&self, row: usize) -> &[u32] {
        let m = self.attrs.len();
        &self.codes[row * m..(row + 1) * m]
    }
    pub(crate) fn leaf_label(&self, row: usize) -> Vec<Label> {
        self.leaves(row).iter().map(|&x| (0, x)).collect()
    }
    pub(crate) fn key(&self, labels: &[Label]) -> u128 {
        labels.iter().zip(&self.attrs).zip(&self.radix).map(|((&y, a), &w)| a.node(y) as u128 * w).sum()
    }
    #[inline]
    pub(crate) fn radix(&self, a: usize) -> u128 {
        self.radix[a]
    }
    fn is_leaf_tuple(labels: &[Label]) -> bool {
        labels.iter().all(|y| y.0 == 0)
    }

    /// Records and sensitive count of a label tuple.
    pub(crate) fn tuple(&self, labels: &[Label]) -> (u64, Box<dyn Fn(u32) -> u64 + '_>) {
        let key = self.key(labels);
        if Self::is_leaf_tuple(labels) {
            match self.leaf_tid.get(&key) {
                Some(&t) => {
                    let (lo, hi) = self.tid_rows[t as usize];
                    let count = move |z| {
                        (lo..hi)
                            .find(|&r| self.z[r as usize] == z)
                            .map_or(0, |r| self.at_leaf[self.slot[r as usize] as usize])
                    };
                    (self.tuple_leaf[t as usize], Box::new(count))
                }
                None => (0, Box::new(|_| 0)),
            }
        } else {
            match self.general.get(&key) {
                Some(t) => (t.total, Box::new(move |z| t.z(z))),
                None => (0, Box::new(|_| 0)),
            }
        }
    }

    /// Move `c` records of `row` from labels `from` to labels `to`.
    pub(crate) fn relabel(&mut self, row: usize, c: u64, from: &[Label], to: &[Label]) {
        if from == to || c == 0 {
            return;
        }
        let m = self.attrs.len();
        for a in 0..m {
            let x = self.codes[row * m + a];
            self.attrs[a].relabel(x, c, from[a], to[a]);
        }
        let z = self.z[row];
        for (labels, sign) in [(from, -1i64), (to, 1)] {
            let d = sign * c as i64;
            if Self::is_leaf_tuple(labels) {
                // A row's records sit at its own leaf tuple only.
                let t = self.tid[row] as usize;
                self.tuple_leaf[t] = self.tuple_leaf[t].wrapping_add_signed(d);
                let sl = self.slot[row] as usize;
                self.at_leaf[sl] = self.at_leaf[sl].wrapping_add_signed(d);
            } else {
                let key = self.key(labels);
                let t = self.general.entry(key).or_default();
                t.add(z, d);
                if t.total == 0 {
                    self.general.remove(&key);
                }
            }
        }
    }

    /// N·H(X|Y) summed over the quasi-identifiers, from scratch.
    pub(crate) fn n_conditional_entropy(&self) -> f64 {
        self.attrs.iter().map(|a| a.n_entropy(&self.f)).sum()
    }

    /// N·I(Y;Z), Y the tuple of labels, from scratch.
    pub(crate) fn n_mutual_information(&self) -> f64 {
        let f = &self.f;
        let mut w = 0.0;
        for t in self.general.values() {
            w += f.f(t.total) - t.by_z.iter().map(|e| f.f(e.1)).sum::<f64>();
        }
        let mut z_at_leaf = vec![0.0; self.tuple_leaf.len()];
        for row in (0..self.rows()).filter(|&r| self.slot[r] as usize == r) {
            z_at_leaf[self.tid[row] as usize] += f.f(self.at_leaf[row]);
        }
        for (t, &c) in self.tuple_leaf.iter().enumerate() {
            w += f.f(c) - z_at_leaf[t];
        }
        let hz = f.f(self.n) - self.z_totals.iter().map(|&c| f.f(c)).sum::<f64>();
        hz - w
    }

    /// The distance of the table as it stands: H(X|Y) + I(Y;Z) (or H(X|Y) alone for CE).
    pub fn objective(&self) -> f64 {
        let mi = if self.with_mi { self.n_mutual_information() } else { 0.0 };
        (self.n_conditional_entropy() + mi) / self.n as f64
    }
}

impl State {
    /// The counts of the table with `blocks` generalized to their labels and every other
    /// record at its leaves, counted from scratch (the plain algorithm's way; the incremental
    /// updates of [`State::relabel`] are tested against it).
    pub(crate) fn recount(ft: &FrequencyTable, with_mi: bool, blocks: &[Block]) -> Result<Self> {
        let mut s = State::new(ft, with_mi)?;
        for a in &mut s.attrs {
            a.label.fill(0);
            a.joint.fill(0);
        }
        s.tuple_leaf.fill(0);
        s.at_leaf.fill(0);
        s.general.clear();
        let mut at_leaves = s.counts.clone();
        let mut placed: Vec<(usize, u64, Vec<Label>)> = Vec::new();
        for b in blocks {
            for &(row, c) in &b.members {
                at_leaves[row as usize] -= c;
                placed.push((row as usize, c, b.label.clone()));
            }
        }
        for (row, &c) in at_leaves.iter().enumerate() {
            placed.push((row, c, s.leaf_label(row)));
        }
        for (row, c, labels) in placed {
            for (a, &y) in labels.iter().enumerate() {
                let x = s.leaves(row)[a];
                let i = s.attrs[a].ji(x, y.0);
                s.attrs[a].joint[i] += c;
                if y.0 > 0 {
                    let n = s.attrs[a].node(y) as usize;
                    s.attrs[a].label[n] += c;
                }
            }
            if Self::is_leaf_tuple(&labels) {
                s.tuple_leaf[s.tid[row] as usize] += c;
                s.at_leaf[s.slot[row] as usize] += c;
            } else if c > 0 {
                let key = s.key(&labels);
                let z = s.z[row];
                s.general.entry(key).or_default().add(z, c as i64);
            }
        }
        Ok(s)
    }
}
