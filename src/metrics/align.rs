//! Which released equivalence class each original record went into, for the metrics that
//! compare an original record with its own anonymized record (the entropy loss).
//!
//! A release does not carry record ids, so records are assigned by consistency: an original
//! record (leaf values, sensitive value) may go to any class whose generalized values cover
//! its leaves and which still has an unassigned record with its sensitive value; the
//! suppressed records are a last resort that covers everything. Original tuples with the
//! fewest candidate classes are placed first. Full-domain releases give each tuple exactly one
//! candidate, so there the assignment is the true one; counterfeit records simply stay
//! unassigned.

use super::decode::{Decoded, WITHHELD};
use super::matching::slot;
use crate::encode::FrequencyTable;
use crate::error::{AnonError, Result};
use crate::release::Cell;
use std::collections::HashMap;

/// Original records per (block, attribute, leaf): `counts[block][attr]` maps leaf → records.
/// Blocks are the release's classes, then (last) the suppressed records when there are any.
#[derive(Debug, Clone)]
pub(crate) struct Alignment {
    pub(crate) counts: Vec<Vec<HashMap<u32, u64>>>,
    pub(crate) block_sizes: Vec<u64>,
    /// Original records no released record could account for.
    pub(crate) unmatched: u64,
}

/// Assign the original records (`ft`, over the same quasi-identifiers) to `rel`'s blocks.
pub(crate) fn align(ft: &FrequencyTable, rel: &Decoded, original: &str) -> Result<Alignment> {
    let names: Vec<&str> = ft.qis.iter().map(|q| q.name.as_str()).collect();
    if names != rel.qi_names.iter().map(|s| s.as_str()).collect::<Vec<_>>() {
        return Err(AnonError::table(original, "its quasi-identifiers differ from those the release was decoded with"));
    }
    let members = rel.class_members();
    let suppressed: Vec<usize> = (0..rel.len()).filter(|&r| rel.suppressed[r]).collect();
    let mut blocks: Vec<&[usize]> = members.iter().map(|m| m.as_slice()).collect();
    if !suppressed.is_empty() {
        blocks.push(&suppressed);
    }
    let sens_map = sensitive_map(ft, rel);
    let mut capacity = capacities(rel, &blocks, sens_map.is_some());
    let index = BlockIndex::new(ft, rel, &members);
    let sup = (!suppressed.is_empty()).then_some(members.len() as u32);
    let cands: Vec<Vec<u32>> = (0..ft.len()).map(|r| index.candidates(ft, rel, &members, r, sup)).collect();
    let mut order: Vec<usize> = (0..ft.len()).collect();
    order.sort_by_key(|&r| cands[r].len());
    // assign[r]: block → records of original tuple r placed there.
    let mut assign: Vec<Vec<(u32, u64)>> = vec![Vec::new(); ft.len()];
    let mut left = vec![0u64; ft.len()];
    let mut codes: Vec<Option<u32>> = vec![None; ft.len()];
    let mut unmatched = 0;
    for r in order {
        let s = sens_map.as_ref().map(|m| m[ft.sensitive.as_ref().map_or(0, |s| s.codes[r]) as usize]);
        let code = match s {
            // A value no released record shows may be a suppressed record's, withheld.
            Some(None) if sup.is_some() => WITHHELD,
            Some(None) => {
                unmatched += ft.counts[r];
                continue;
            }
            Some(Some(code)) => code,
            None => 0,
        };
        codes[r] = Some(code);
        left[r] = place(ft.counts[r], &cands[r], code, &mut capacity, &mut assign[r]);
        if left[r] > 0 {
            // The own-ancestor classes are full: fall back to every class that covers the tuple.
            let all = index.scan(ft, rel, &members, r, sup);
            left[r] = place(left[r], &all, code, &mut capacity, &mut assign[r]);
        }
    }
    if left.iter().any(|&l| l > 0) {
        // Greedy order can strand records a full assignment would place: augment along
        // alternating paths (a bipartite b-matching per sensitive value).
        let covering = |r: usize| index.scan(ft, rel, &members, r, sup);
        super::matching::augment(&codes, &mut left, &mut assign, &mut capacity, covering);
    }
    unmatched += left.iter().sum::<u64>();
    let n_attr = ft.qis.len();
    let mut out = Alignment {
        counts: vec![vec![HashMap::new(); n_attr]; blocks.len()],
        block_sizes: vec![0; blocks.len()],
        unmatched,
    };
    for (r, placed) in assign.iter().enumerate() {
        for &(b, n) in placed {
            out.block_sizes[b as usize] += n;
            for (a, q) in ft.qis.iter().enumerate() {
                *out.counts[b as usize][a].entry(q.codes[r]).or_insert(0) += n;
            }
        }
    }
    Ok(out)
}

/// Put up to `left` records into `blocks` in order, recording them in `placed`; returns those
/// left over.
fn place(
    mut left: u64,
    blocks: &[u32],
    code: u32,
    capacity: &mut [HashMap<u32, u64>],
    placed: &mut Vec<(u32, u64)>,
) -> u64 {
    for &b in blocks {
        let key = slot(&capacity[b as usize], code);
        let Some(cap) = capacity[b as usize].get_mut(&key) else { continue };
        let take = left.min(*cap);
        if take == 0 {
            continue;
        }
        *cap -= take;
        left -= take;
        match placed.iter_mut().find(|p| p.0 == b) {
            Some(p) => p.1 += take,
            None => placed.push((b, take)),
        }
        if left == 0 {
            break;
        }
    }
    left
}

/// Unassigned released records per block and sensitive code (code 0 for all without one;
/// [`WITHHELD`] for suppressed records that carry no value).
fn capacities(rel: &Decoded, blocks: &[&[usize]], by_sensitive: bool) -> Vec<HashMap<u32, u64>> {
    blocks
        .iter()
        .map(|rows| {
            let mut m = HashMap::new();
            for &r in rows.iter() {
                let code = rel.sensitive.as_ref().filter(|_| by_sensitive).map_or(0, |s| s.codes[r]);
                *m.entry(code).or_insert(0) += rel.weights[r];
            }
            m
        })
        .collect()
}

/// Original sensitive code → release code (None: the release has no record with that value).
/// `None` overall when either side has no sensitive column.
fn sensitive_map(ft: &FrequencyTable, rel: &Decoded) -> Option<Vec<Option<u32>>> {
    let (o, r) = (ft.sensitive.as_ref()?, rel.sensitive.as_ref()?);
    let idx: HashMap<&str, u32> = r.values.iter().enumerate().map(|(i, v)| (v.as_str(), i as u32)).collect();
    Some(o.values.iter().map(|v| idx.get(v.as_str()).copied()).collect())
}

/// Classes indexed two ways: exactly, by the hierarchy node (level, code) of every value (a
/// full-domain release's numeric ranges are node bounds, so an original tuple's classes are
/// found by looking up its ancestors at each level vector the release uses), and by
/// categorical nodes alone, for ranges that are no node's bounds (local recoding: min–max
/// ranges), which are then scanned.
struct BlockIndex {
    buckets: Vec<(Vec<u8>, ClassesByCodes)>,
    /// [levels..., codes...] → classes.
    exact: HashMap<Vec<u32>, Vec<u32>>,
    /// The level vectors of the exactly indexed classes.
    signatures: Vec<Vec<u8>>,
}

/// Categorical node codes → the classes with those values.
type ClassesByCodes = HashMap<Vec<u32>, Vec<u32>>;

/// Numeric node bounds → the (level, node) pairs with those bounds.
type NodesByBounds = HashMap<[u64; 2], Vec<(u8, u32)>>;

fn nodes_by_bounds(h: &crate::hierarchy::Hierarchy) -> NodesByBounds {
    let mut out: NodesByBounds = HashMap::new();
    if h.is_numeric() {
        for j in 0..=h.height() {
            for n in 0..h.width(j) as u32 {
                if let Some((lo, hi)) = h.bounds(j, n) {
                    out.entry([lo.to_bits(), hi.to_bits()]).or_default().push((j as u8, n));
                }
            }
        }
    }
    out
}

impl BlockIndex {
    fn new(ft: &FrequencyTable, rel: &Decoded, members: &[Vec<usize>]) -> Self {
        let bounds: Vec<NodesByBounds> = ft.qis.iter().map(|q| nodes_by_bounds(&q.hierarchy)).collect();
        let mut by_sig: HashMap<Vec<u8>, ClassesByCodes> = HashMap::new();
        let mut exact: HashMap<Vec<u32>, Vec<u32>> = HashMap::new();
        let mut signatures = std::collections::BTreeSet::new();
        for (c, rows) in members.iter().enumerate() {
            let Some(&first) = rows.first() else { continue };
            let (mut sig, mut codes) = (Vec::new(), Vec::new());
            let mut nodes: Vec<Vec<(u8, u32)>> = Vec::new();
            for (a, cell) in rel.cells[first].iter().enumerate() {
                nodes.push(match *cell {
                    Cell::Node { level, code } => {
                        sig.push(level);
                        codes.push(code);
                        vec![(level, code)]
                    }
                    Cell::Range { lo, hi } => bounds[a].get(&[lo.to_bits(), hi.to_bits()]).cloned().unwrap_or_default(),
                    Cell::Suppressed => Vec::new(),
                });
            }
            by_sig.entry(sig).or_default().entry(codes).or_default().push(c as u32);
            for choice in combinations(&nodes) {
                let levels: Vec<u8> = choice.iter().map(|n| n.0).collect();
                let key: Vec<u32> = levels.iter().map(|&l| l as u32).chain(choice.iter().map(|n| n.1)).collect();
                exact.entry(key).or_default().push(c as u32);
                signatures.insert(levels);
            }
        }
        BlockIndex { buckets: by_sig.into_iter().collect(), exact, signatures: signatures.into_iter().collect() }
    }

    /// The classes whose values are ancestors of tuple `r` (for a full-domain release, the one
    /// class it went to), or when there are none every class that covers it; then the
    /// suppressed block `sup`.
    fn candidates(
        &self,
        ft: &FrequencyTable,
        rel: &Decoded,
        members: &[Vec<usize>],
        r: usize,
        sup: Option<u32>,
    ) -> Vec<u32> {
        let mut out = self.own(ft, r);
        if out.is_empty() {
            out = self.scan(ft, rel, members, r, None);
        }
        out.extend(sup);
        out
    }

    /// Exact lookups of the tuple's ancestors at every level vector of the release.
    fn own(&self, ft: &FrequencyTable, r: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for sig in &self.signatures {
            let codes = ft.qis.iter().zip(sig).map(|(q, &l)| q.hierarchy.up(l as usize)[q.codes[r] as usize]);
            let key: Vec<u32> = sig.iter().map(|&l| l as u32).chain(codes).collect();
            out.extend(self.exact.get(&key).into_iter().flatten());
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every class whose values cover tuple `r`, then the suppressed block `sup`.
    fn scan(&self, ft: &FrequencyTable, rel: &Decoded, members: &[Vec<usize>], r: usize, sup: Option<u32>) -> Vec<u32> {
        let cat: Vec<usize> = (0..ft.qis.len()).filter(|&a| !ft.qis[a].hierarchy.is_numeric()).collect();
        let mut out = Vec::new();
        for (sig, map) in &self.buckets {
            let key: Vec<u32> = cat
                .iter()
                .zip(sig)
                .map(|(&a, &l)| ft.qis[a].hierarchy.up(l as usize)[ft.qis[a].codes[r] as usize])
                .collect();
            for &c in map.get(&key).into_iter().flatten() {
                let row = &rel.cells[members[c as usize][0]];
                if ft.qis.iter().zip(row).all(|(q, cell)| cell.covers(&q.hierarchy, q.codes[r])) {
                    out.push(c);
                }
            }
        }
        // In class order, not the buckets' hash order: the greedy placement takes candidates
        // in this order, and the alignment (with the entropy metrics) must not vary between
        // runs or with the order a release is read back in.
        out.sort_unstable();
        out.extend(sup);
        out
    }
}

/// Every choice of one element per list (none when a list is empty); nodes sharing bounds
/// across levels are rare, so this is almost always a single choice.
fn combinations(lists: &[Vec<(u8, u32)>]) -> Vec<Vec<(u8, u32)>> {
    let mut out: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
    for l in lists {
        out = out.iter().flat_map(|prefix| l.iter().map(move |x| [prefix.as_slice(), &[*x]].concat())).collect();
        if out.is_empty() || out.len() > 64 {
            return Vec::new();
        }
    }
    out
}
