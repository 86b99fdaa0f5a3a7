//! Equivalence classes of a lattice node, computed from the frequency table or rolled up from
//! a more specific node that is already grouped.
//!
//! Rolling up is what makes searching a whole lattice cheap: the classes of a node are unions
//! of the classes of any of its predecessors, so a node is grouped by relabelling the
//! predecessor's (few) classes instead of the (many) frequency rows.

use super::FrequencyTable;
use super::hash::{FastMap, fast_map};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use std::sync::Arc;

/// The equivalence classes of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Grouping {
    /// Generalization level of each quasi-identifier.
    pub levels: Vec<u8>,
    /// `codes[attr][class]`: the class's node code at `levels[attr]`.
    pub codes: Vec<Vec<u32>>,
    /// Number of records in each class.
    pub sizes: Vec<u64>,
    /// `ranges[attr][class]` for numeric attributes: the smallest and largest leaf in the class
    /// (leaf codes ascend with value), the class's published min–max range. Empty for
    /// categorical attributes.
    pub(crate) ranges: Vec<Vec<(u32, u32)>>,
}

impl Grouping {
    pub fn len(&self) -> usize {
        self.sizes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }
    /// Records in all classes.
    pub fn total(&self) -> u64 {
        self.sizes.iter().sum()
    }
    /// Canonical form for comparisons: classes sorted by their codes.
    pub fn sorted(&self) -> Grouping {
        let n = self.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| self.codes.iter().map(|c| c[a]).cmp(self.codes.iter().map(|c| c[b])));
        Grouping {
            levels: self.levels.clone(),
            codes: self.codes.iter().map(|c| order.iter().map(|&i| c[i]).collect()).collect(),
            sizes: order.iter().map(|&i| self.sizes[i]).collect(),
            ranges: self
                .ranges
                .iter()
                .map(|r| if r.is_empty() { Vec::new() } else { order.iter().map(|&i| r[i]).collect() })
                .collect(),
        }
    }
}

/// A class key: one code per attribute packed by mixed radix. 128 bits, because 12–15
/// quasi-identifiers with fine leaves (postcodes, ages) exceed 2^64 combinations.
type Key = u128;

/// Strides that pack one code per attribute into a class key.
fn strides(hs: &[Arc<Hierarchy>], levels: &[u8]) -> Result<Vec<Key>> {
    let mut out = Vec::with_capacity(hs.len());
    let mut acc: Key = 1;
    for (h, &l) in hs.iter().zip(levels) {
        out.push(acc);
        acc = acc.checked_mul(h.width(l as usize) as Key).ok_or_else(|| {
            AnonError::hierarchy(
                h.attribute(),
                "the quasi-identifiers have too many value combinations to encode (over 2^128)",
            )
        })?;
    }
    Ok(out)
}

fn key_space(hs: &[Arc<Hierarchy>], levels: &[u8]) -> Key {
    hs.iter().zip(levels).fold(1, |acc: Key, (h, &l)| acc.saturating_mul(h.width(l as usize) as Key))
}

/// Group the frequency table at a node from scratch. Also returns each frequency row's class.
///
/// The rows are taken as the classes of a grouping at the bottom (one class a row, equal rows
/// not merged) and generalized to the node by [`generalize_to`]: its classes are numbered by
/// their first row, as building them row by row numbered them, with the same sizes and ranges;
/// the keys packed column by column into 64 bits and numbered in an open-addressed table, where
/// the row-by-row build hashed a 128-bit key per row (a release's own grouping of its node was
/// 6 % of Adult's statement).
pub fn group(ft: &FrequencyTable, levels: &[u8]) -> Result<(Grouping, Vec<u32>)> {
    let hs = ft.hierarchies();
    check_levels(&hs, levels)?;
    if levels.iter().all(|&l| l == 0) {
        return Ok(group_bottom(ft, &hs, levels));
    }
    // Each column's codes and ranges copied by a job of its own: a release groups every row of
    // a table of 10^6 frequency rows, where one thread copying them left the pool waiting.
    let (columns, sizes) = crate::parallel::join(
        || {
            crate::parallel::map(&ft.qis, |q| {
                let ranges =
                    if q.hierarchy.is_numeric() { q.codes.iter().map(|&c| (c, c)).collect() } else { Vec::new() };
                (q.codes.clone(), ranges)
            })
        },
        || ft.counts.clone(),
    );
    let (codes, ranges) = columns.into_iter().unzip();
    let rows = Grouping { levels: vec![0; hs.len()], codes, sizes, ranges };
    generalize_to(&hs, &rows, levels)
}

/// The bottom node's classes are runs of equal leaf codes, because the frequency rows are
/// sorted by their codes: no hashing, which matters when nearly every one of 10^6 tuples is
/// unique (12–15 quasi-identifiers). Same classes in the same order as hashing would give.
fn group_bottom(ft: &FrequencyTable, hs: &[Arc<Hierarchy>], levels: &[u8]) -> (Grouping, Vec<u32>) {
    let (starts, codes, sizes) = ft.qi_runs();
    let numeric: Vec<(&Vec<u32>, bool)> = codes.iter().zip(hs).map(|(c, h)| (c, h.is_numeric())).collect();
    let ranges = crate::parallel::map(
        &numeric,
        |&(c, numeric)| if numeric { c.iter().map(|&c| (c, c)).collect() } else { Vec::new() },
    );
    let row_class = crate::parallel::run_ids(&starts, ft.len());
    (Grouping { levels: levels.to_vec(), codes, sizes, ranges }, row_class)
}

/// Group the node one level above `from` in attribute `attr`, from `from`'s classes. Also
/// returns each class of `from`'s class in the result.
pub fn rollup(hs: &[Arc<Hierarchy>], from: &Grouping, attr: usize) -> Result<(Grouping, Vec<u32>)> {
    let mut levels = from.levels.clone();
    let l = levels[attr] as usize;
    if l >= hs[attr].height() {
        return Err(AnonError::hierarchy(
            hs[attr].attribute(),
            format!("cannot generalize beyond level {l}, the root"),
        ));
    }
    levels[attr] += 1;
    generalize_to(hs, from, &levels)
}

/// Group the node `levels` (a generalization of `from`'s node, possibly several levels up in
/// several attributes) from `from`'s classes. Also returns each class of `from`'s class in
/// the result. Any already-grouped specialization will do; the one with the fewest classes is
/// the cheapest.
///
/// The result does not depend on which specialization it is grouped from: classes come in the
/// order of their first source class, and by induction from the bottom (whose classes follow
/// the frequency rows) that is the order of each class's first frequency row, whatever the
/// path. Sizes are sums and ranges min–max, exact in any order.
///
/// Column by column, the hot loop of every lattice search: the packed keys attribute by
/// attribute, one lookup per source class, then the classes' columns gathered from their
/// first source class and their sizes and ranges scattered into them.
pub fn generalize_to(hs: &[Arc<Hierarchy>], from: &Grouping, levels: &[u8]) -> Result<(Grouping, Vec<u32>)> {
    check_generalizes(hs, from, levels)?;
    let jumps = jumps(hs, &from.levels, levels);
    let strides = strides(hs, levels)?;
    let space = key_space(hs, levels);
    // Keys below 2^64 (nearly every node) are packed and hashed in 64 bits, which halves the
    // work of the loop that dominates a lattice search; the numbering is the same either way.
    let (map, first) = if space <= u64::MAX as Key {
        let strides: Vec<u64> = strides.iter().map(|&s| s as u64).collect();
        number_keys(space, &pack_keys(from.len(), &jumps, &from.codes, &strides))
    } else {
        number_keys(space, &pack_keys(from.len(), &jumps, &from.codes, &strides))
    };
    Ok((gather(from, levels, &jumps, &map, &first), map))
}

/// `levels` must be a generalization of `from`'s node.
fn check_generalizes(hs: &[Arc<Hierarchy>], from: &Grouping, levels: &[u8]) -> Result<()> {
    check_levels(hs, levels)?;
    if let Some(a) = (0..hs.len()).find(|&a| levels[a] < from.levels[a]) {
        return Err(AnonError::hierarchy(
            hs[a].attribute(),
            format!("level {} is below the grouped node's level {}", levels[a], from.levels[a]),
        ));
    }
    Ok(())
}

/// The grouping at `levels` once `from`'s classes are numbered (`map`: each source class's
/// class, `first`: each class's first source class): the classes' codes gathered from their
/// first source class, their sizes and ranges scattered into them.
fn gather(from: &Grouping, levels: &[u8], jumps: &[Vec<u32>], map: &[u32], first: &[u32]) -> Grouping {
    // An attribute at the source's level keeps its codes (its jump is the identity).
    let codes = |a: &usize| -> Vec<u32> {
        let (j, col) = (&jumps[*a], &from.codes[*a]);
        if levels[*a] == from.levels[*a] {
            first.iter().map(|&c| col[c as usize]).collect()
        } else {
            first.iter().map(|&c| j[col[c as usize] as usize]).collect()
        }
    };
    let sizes = || {
        let mut sizes = vec![0u64; first.len()];
        for (&to, &n) in map.iter().zip(&from.sizes) {
            sizes[to as usize] += n;
        }
        sizes
    };
    // Categorical attributes have no ranges.
    let ranges = |r: &Vec<(u32, u32)>| -> Vec<(u32, u32)> {
        if r.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<(u32, u32)> = first.iter().map(|&c| r[c as usize]).collect();
        for (&to, &(lo, hi)) in map.iter().zip(r) {
            let o = &mut out[to as usize];
            *o = (o.0.min(lo), o.1.max(hi));
        }
        out
    };
    let attrs: Vec<usize> = (0..from.codes.len()).collect();
    let (codes, (sizes, ranges)) = if map.len() < PARALLEL_CLASSES {
        (attrs.iter().map(codes).collect(), (sizes(), from.ranges.iter().map(ranges).collect()))
    } else {
        // A big source (a search's node grouped from the bottom of a table of 10^5 tuples and
        // more): each column, the sizes and each range gathered by a job of its own, where
        // one thread did them all while the pool waited.
        crate::parallel::join(
            || crate::parallel::map(&attrs, codes),
            || crate::parallel::join(sizes, || crate::parallel::map(&from.ranges, ranges)),
        )
    };
    Grouping { levels: levels.to_vec(), codes, sizes, ranges }
}

/// Source classes from which [`gather`] and [`LatticeKeys::generalize`] run their passes on
/// the pool: below, a grouping is a fraction of a millisecond (h-ceiling's frontier groups
/// tens of thousands of them, each already a job of its own).
const PARALLEL_CLASSES: usize = 1 << 16;

/// Class keys packed with the same strides at every node of a lattice (each attribute's
/// stride from the widest level of the attributes before it), so that a generalization's keys
/// follow from a specialization's by one pass per raised attribute (the raised attribute's
/// code replaced in place) instead of one pass per attribute ([`generalize_to`] packs at the
/// node's own strides, which change with every level below). Only where every key fits in 64
/// bits ([`LatticeKeys::new`]).
#[derive(Debug, Clone)]
pub(crate) struct LatticeKeys {
    strides: Vec<u64>,
    /// Every key is below it.
    space: Key,
}

impl LatticeKeys {
    /// `None` when the keys would not fit in 64 bits (then [`generalize_to`] packs each node).
    pub(crate) fn new(hs: &[Arc<Hierarchy>]) -> Option<Self> {
        let mut strides = Vec::with_capacity(hs.len());
        let mut acc: u64 = 1;
        for h in hs {
            strides.push(acc);
            let widest = (0..=h.height()).map(|l| h.width(l)).max().unwrap_or(1) as u64;
            acc = acc.checked_mul(widest.max(1))?;
        }
        Some(LatticeKeys { strides, space: Key::from(acc) })
    }

    /// The key of every class of `g`.
    pub(crate) fn of(&self, g: &Grouping) -> Vec<u64> {
        let mut keys = vec![0u64; g.len()];
        crate::parallel::in_ranges(&mut keys, 1, KEY_CLASSES, |classes, part| {
            for (col, &s) in g.codes.iter().zip(&self.strides) {
                for (k, &code) in part.iter_mut().zip(&col[classes.clone()]) {
                    *k += u64::from(code) * s;
                }
            }
        });
        keys
    }

    /// [`generalize_to`] from `from` whose class keys are `keys` ([`LatticeKeys::of`]): the
    /// same grouping and map (classes are numbered by first appearance, whatever the keys
    /// that tell them apart), and the result's keys.
    pub(crate) fn generalize(
        &self,
        hs: &[Arc<Hierarchy>],
        from: &Grouping,
        keys: &[u64],
        levels: &[u8],
    ) -> Result<(Grouping, Vec<u32>, Vec<u64>)> {
        check_generalizes(hs, from, levels)?;
        let jumps = jumps(hs, &from.levels, levels);
        // Code c becomes jump[c]: the key moves by (jump[c] − c) strides, a difference that
        // may be negative, so in wrapping arithmetic (the result is a key, below 2^64).
        let step = |k: u64, code: u32, jump: &[u32], s: u64| {
            k.wrapping_add(u64::from(jump[code as usize]).wrapping_sub(u64::from(code)).wrapping_mul(s))
        };
        let raised: Vec<usize> = (0..hs.len()).filter(|&a| from.levels[a] != levels[a]).collect();
        // The keys of `classes` (in `part`) moved by the attributes `attrs`, one pass each.
        let move_by = |part: &mut [u64], classes: std::ops::Range<usize>, attrs: &[usize]| {
            for &a in attrs {
                for (k, &c) in part.iter_mut().zip(&from.codes[a][classes.clone()]) {
                    *k = step(*k, c, &jumps[a], self.strides[a]);
                }
            }
        };
        let moved: Vec<u64> = match raised.split_first() {
            // A small source on this thread, its first pass also the copy of the keys.
            Some((&a, rest)) if from.len() < PARALLEL_CLASSES => {
                let mut moved: Vec<u64> =
                    keys.iter().zip(&from.codes[a]).map(|(&k, &c)| step(k, c, &jumps[a], self.strides[a])).collect();
                move_by(&mut moved, 0..from.len(), rest);
                moved
            }
            _ => {
                let mut moved = keys.to_vec();
                crate::parallel::in_ranges(&mut moved, 1, KEY_CLASSES, |classes, part| move_by(part, classes, &raised));
                moved
            }
        };
        let (map, first) = number_keys(self.space, &moved);
        let keys = crate::parallel::gather(&moved, &first);
        Ok((gather(from, levels, &jumps, &map, &first), map, keys))
    }
}

/// Classes a job of [`LatticeKeys::of`] and [`pack_keys`] keys. Small enough that a table's
/// bottom (2 × 10^5 tuples at 5 M NPS-like rows) makes a dozen jobs: with four, two cores took
/// two and two, unequal, and sixteen had nothing to take.
const KEY_CLASSES: usize = 1 << 14;

/// A packed class key: 64 bits when the node's key space allows, else 128.
trait Packed: Copy + Eq + Send + Sync + std::ops::AddAssign + std::ops::Mul<Output = Self> + From<u32> {
    /// Marks an empty hash slot (keys are below the key space, so never this).
    const EMPTY: Self;
    /// The key folded to 64 bits for hashing.
    fn fold(self) -> u64;
    fn index(self) -> usize;
}

impl Packed for u32 {
    const EMPTY: Self = u32::MAX;
    fn fold(self) -> u64 {
        u64::from(self)
    }
    fn index(self) -> usize {
        self as usize
    }
}

impl Packed for u64 {
    const EMPTY: Self = u64::MAX;
    fn fold(self) -> u64 {
        self
    }
    fn index(self) -> usize {
        self as usize
    }
}

impl Packed for u128 {
    const EMPTY: Self = u128::MAX;
    fn fold(self) -> u64 {
        (self as u64) ^ ((self >> 64) as u64).rotate_left(29)
    }
    fn index(self) -> usize {
        self as usize
    }
}

/// Each source class's key at the target node, attribute by attribute (column order keeps
/// each pass a stream over one code column).
fn pack_keys<K: Packed>(classes: usize, jumps: &[Vec<u32>], codes: &[Vec<u32>], strides: &[K]) -> Vec<K> {
    let mut keys: Vec<K> = vec![K::from(0); classes];
    // In ranges of classes on the pool (one range, on the caller's thread, below
    // [`KEY_CLASSES`]): a release groups its node from every frequency row.
    crate::parallel::in_ranges(&mut keys, 1, KEY_CLASSES, |range, part| {
        for ((jump, col), &s) in jumps.iter().zip(codes).zip(strides) {
            for (k, &code) in part.iter_mut().zip(&col[range.clone()]) {
                *k += K::from(jump[code as usize]) * s;
            }
        }
    });
    keys
}

/// Class numbers for packed keys in order of first appearance: each key's class, and each
/// class's first key. Many keys of few classes are numbered in chunks on the pool
/// ([`number_in_chunks`]) when the caller is not itself a job on it, others on the caller's
/// thread ([`number_serially`]): a job of the pool (one of h-ceiling's frontier groupings)
/// has other jobs beside it to keep the cores busy, and chunks would add the merge's work.
fn number_keys<K: Packed>(space: Key, keys: &[K]) -> (Vec<u32>, Vec<u32>) {
    if keys.len() >= PARALLEL_KEYS && crate::parallel::outside_pool() && repeated(space, keys) {
        number_in_chunks(space, keys)
    } else {
        number_serially(space, keys)
    }
}

/// Keys from which [`number_keys`] may number them in chunks on the pool.
const PARALLEL_KEYS: usize = 1 << 16;

/// Keys [`repeated`] looks at.
const SAMPLE_KEYS: usize = 4096;

/// Whether `keys` look like few classes among many keys: at most half of [`SAMPLE_KEYS`] keys
/// taken evenly across them are distinct. Then [`number_in_chunks`]' merge, one key per chunk
/// and class, is small beside the keys; when nearly every key is its own class the merge would
/// number them all again on one thread, after the chunks.
fn repeated<K: Packed>(space: Key, keys: &[K]) -> bool {
    let step = keys.len() / SAMPLE_KEYS;
    let sample: Vec<K> = keys.iter().step_by(step.max(1)).take(SAMPLE_KEYS).copied().collect();
    2 * number_serially(space, &sample).1.len() <= sample.len()
}

/// [`number_keys`] on the pool: each chunk of keys numbered on its own, then the chunks'
/// classes numbered by their first keys, chunk after chunk. A class's first key in the first
/// chunk that has it is its first key overall, and within a chunk classes come in the order of
/// their first keys, so the merge meets the classes in the order of their first appearance:
/// the numbering [`number_serially`] gives, whatever the chunks.
fn number_in_chunks<K: Packed>(space: Key, keys: &[K]) -> (Vec<u32>, Vec<u32>) {
    // Four chunks a thread, so that a thread slowed by the machine's other work takes fewer.
    let size = keys.len().div_ceil(4 * crate::parallel::threads()).max(1 << 14);
    let chunks = crate::parallel::ranges(keys.len(), size);
    let local = crate::parallel::map(&chunks, |r| number_serially(space, &keys[r.clone()]));
    let (mut heads, mut at, mut offsets) = (Vec::new(), Vec::new(), vec![0]);
    for (r, (_, first)) in chunks.iter().zip(&local) {
        heads.extend(first.iter().map(|&f| keys[r.start + f as usize]));
        at.extend(first.iter().map(|&f| (r.start + f as usize) as u32));
        offsets.push(heads.len());
    }
    let (class, first) = number_serially(space, &heads);
    let first = first.iter().map(|&f| at[f as usize]).collect();
    // Zeroed pages from the system (no pass here): each job's writes are its chunk's faults.
    let mut map = vec![0u32; keys.len()];
    let parts = crate::parallel::split_mut(&mut map, chunks.iter().map(|r| r.len()));
    let jobs: Vec<_> = parts.into_iter().zip(local.iter().zip(offsets.windows(2))).collect();
    crate::parallel::run(jobs, |(part, ((local, _), o))| {
        let class = &class[o[0]..o[1]];
        for (m, &l) in part.iter_mut().zip(local) {
            *m = class[l as usize];
        }
    });
    (map, first)
}

/// [`number_keys`] on the caller's thread: dense when the key space is small beside the input
/// (an array beats hashing), else an open-addressing table of twice the input's size.
fn number_serially<K: Packed>(space: Key, keys: &[K]) -> (Vec<u32>, Vec<u32>) {
    let mut map = Vec::with_capacity(keys.len());
    let mut first = Vec::new();
    let mut number = |slot: &mut u32, i: usize| {
        if *slot == u32::MAX {
            *slot = first.len() as u32;
            first.push(i as u32);
        }
        map.push(*slot);
    };
    if space <= (4 * keys.len() as Key).max(4096) {
        let mut index = vec![u32::MAX; space as usize];
        for (i, &k) in keys.iter().enumerate() {
            number(&mut index[k.index()], i);
        }
    } else if space < Key::from(u32::MAX) {
        // Every key fits in 32 bits (u32::MAX stays free to mark an empty slot): slots of 8
        // bytes rather than 16, so the table a roll-up fills and probes is half the bytes
        // (h-ceiling's 9-attribute frontier groups 25,544 nodes, each with a table of its own).
        probe(keys, |k| k.index() as u32, &mut number);
    } else {
        // `K::EMPTY` marks an empty slot: keys are below the key space, which `strides` keeps
        // within 2^128, and the 64-bit path within 2^64 − 1.
        probe(keys, |k| k, &mut number);
    }
    (map, first)
}

/// [`number_serially`]'s open addressing: linear probing in a table of twice the keys' count, each
/// key stored as `slot_key` makes it.
fn probe<K: Packed, S: Packed>(keys: &[K], slot_key: impl Fn(K) -> S, number: &mut impl FnMut(&mut u32, usize)) {
    let bits = (2 * keys.len()).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    // A slot's key and class side by side: one cache line per probe, which is most of the
    // cost once the table outgrows the caches.
    let mut slots = vec![(S::EMPTY, u32::MAX); mask + 1];
    for (i, &k) in keys.iter().enumerate() {
        let k = slot_key(k);
        let mut at = (k.fold().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize & mask;
        while slots[at].0 != k && slots[at].0 != S::EMPTY {
            at = (at + 1) & mask;
        }
        slots[at].0 = k;
        number(&mut slots[at].1, i);
    }
}

/// Per attribute: node code at the grouped level `from` -> its ancestor at level `to`.
fn jumps(hs: &[Arc<Hierarchy>], from: &[u8], to: &[u8]) -> Vec<Vec<u32>> {
    hs.iter()
        .enumerate()
        .map(|(a, h)| {
            let (l0, l1) = (from[a] as usize, to[a] as usize);
            (0..h.width(l0) as u32).map(|c| h.ancestor(l0, l1, c)).collect()
        })
        .collect()
}

/// Sizes of the classes at node `levels` (a generalization of `from`'s node) that the
/// classes `members` of `from` fall in, one per distinct class, without grouping the node:
/// one pass over `from` in which most classes are rejected after a lookup or two, because
/// a code outside the members' codes in any attribute cannot share their class. Near the
/// bottom of a wide lattice (10^6 classes) this is a fraction of grouping the node, and a
/// few classes smaller than k are enough to show that the node fails.
pub fn class_sizes_of(hs: &[Arc<Hierarchy>], from: &Grouping, levels: &[u8], members: &[usize]) -> Result<Vec<u64>> {
    Ok(SizesProbe::new(hs, from, levels, members)?.sizes(from))
}

/// [`class_sizes_of`] once its members are read: their classes' keys, and the codes each
/// attribute allows, so that the caller can first ask how much of the pass they would reject.
pub(crate) struct SizesProbe {
    jumps: Vec<Vec<u32>>,
    strides: Vec<Key>,
    /// The members' classes, numbered as first met.
    index: FastMap<Key, usize>,
    /// Per attribute, the target codes some member has.
    allowed: Vec<Vec<bool>>,
    /// Most selective attributes first: the fewest allowed codes for their width.
    order: Vec<usize>,
}

impl SizesProbe {
    pub(crate) fn new(hs: &[Arc<Hierarchy>], from: &Grouping, levels: &[u8], members: &[usize]) -> Result<Self> {
        check_levels(hs, levels)?;
        let jumps = jumps(hs, &from.levels, levels);
        let strides = strides(hs, levels)?;
        let mut probe = SizesProbe {
            allowed: hs.iter().zip(levels).map(|(h, &l)| vec![false; h.width(l as usize)]).collect(),
            index: fast_map::<Key, usize>(members.len()),
            order: (0..hs.len()).collect(),
            jumps,
            strides,
        };
        for &m in members {
            let next = probe.index.len();
            probe.index.entry(probe.key(from, m)).or_insert(next);
            for a in 0..hs.len() {
                probe.allowed[a][probe.jumps[a][from.codes[a][m] as usize] as usize] = true;
            }
        }
        let share: Vec<f64> = (0..hs.len()).map(|a| probe.share(a)).collect();
        probe.order.sort_by(|&a, &b| share[a].total_cmp(&share[b]));
        Ok(probe)
    }

    /// The share of attribute `a`'s codes at the target level that some member has.
    fn share(&self, a: usize) -> f64 {
        self.allowed[a].iter().filter(|&&x| x).count() as f64 / self.allowed[a].len().max(1) as f64
    }

    /// The share of the classes the pass would look up, were the attributes' codes spread
    /// evenly and independently: the product of the allowed shares. When the members have
    /// most codes of every attribute (a node of a few thousand classes), nearly every class
    /// is looked up, and grouping the node costs less than the pass.
    pub(crate) fn passing_share(&self) -> f64 {
        (0..self.allowed.len()).map(|a| self.share(a)).product()
    }

    fn key(&self, from: &Grouping, c: usize) -> Key {
        (0..self.jumps.len()).map(|a| self.jumps[a][from.codes[a][c] as usize] as Key * self.strides[a]).sum()
    }

    /// One pass over `from`'s classes, in ranges on the pool, each range's sizes then added.
    pub(crate) fn sizes(&self, from: &Grouping) -> Vec<u64> {
        let (allowed, jumps) = (&self.allowed, &self.jumps);
        let parts = crate::parallel::map(&crate::parallel::ranges(from.len(), SIZES_CLASSES), |classes| {
            let mut sizes = vec![0u64; self.index.len()];
            for c in classes.clone() {
                if self.order.iter().all(|&a| allowed[a][jumps[a][from.codes[a][c] as usize] as usize])
                    && let Some(&i) = self.index.get(&self.key(from, c))
                {
                    sizes[i] += from.sizes[c];
                }
            }
            sizes
        });
        let mut sizes = vec![0u64; self.index.len()];
        for part in parts {
            sizes.iter_mut().zip(part).for_each(|(s, n)| *s += n);
        }
        sizes
    }
}

/// Classes a job of [`class_sizes_of`] scans: 25 jobs over the bottom of 2 × 10^5 tuples, so
/// the cores share the probe evenly (jobs of 65,536 classes made four, the last a tenth of the
/// others, and kanon's search scaled 1.25× on two cores; the sizes are sums, the same however
/// the classes are cut).
const SIZES_CLASSES: usize = 1 << 13;

fn check_levels(hs: &[Arc<Hierarchy>], levels: &[u8]) -> Result<()> {
    if levels.len() != hs.len() {
        return Err(AnonError::argument(
            "node",
            "levels",
            format!("{} levels given for {} quasi-identifiers", levels.len(), hs.len()),
        ));
    }
    for (h, &l) in hs.iter().zip(levels) {
        if l as usize > h.height() {
            return Err(AnonError::hierarchy(
                h.attribute(),
                format!("level {l} is above the root (height {})", h.height()),
            ));
        }
    }
    Ok(())
}

/// Generalization degree D(r) of every class (h-ceiling paper, Eqs. 1–3): the mean over the
/// quasi-identifiers of (|M_p|-1)/(|M|-1) for categorical attributes and of
/// (U_q-L_q)/(U-L) over the class's published min–max range for numeric ones. Every record
/// of a class has its class's degree.
pub fn class_degrees(hs: &[Arc<Hierarchy>], g: &Grouping) -> Vec<f64> {
    let n = hs.len().max(1) as f64;
    (0..g.len())
        .map(|c| {
            hs.iter()
                .enumerate()
                .map(|(a, h)| {
                    if h.is_numeric() {
                        let (lo, hi) = g.ranges[a][c];
                        let v = h.leaf_values();
                        h.range_degree(v[lo as usize], v[hi as usize])
                    } else {
                        h.degree(g.levels[a] as usize, g.codes[a][c])
                    }
                })
                .sum::<f64>()
                / n
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{
        Grouping, Key, LatticeKeys, PARALLEL_CLASSES, PARALLEL_KEYS, Packed, SizesProbe, generalize_to,
        number_in_chunks, number_keys, repeated,
    };
    use crate::hierarchy::{Hierarchy, widths_hierarchy};
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    use std::collections::HashMap;
    use std::sync::Arc;

    /// Classes in order of first appearance, from a hash map: the oracle.
    fn by_map<K: Packed + std::hash::Hash>(keys: &[K]) -> (Vec<u32>, Vec<u32>) {
        let (mut seen, mut map, mut first) = (HashMap::new(), Vec::new(), Vec::new());
        for (i, &k) in keys.iter().enumerate() {
            let c = *seen.entry(k).or_insert_with(|| {
                first.push(i as u32);
                first.len() as u32 - 1
            });
            map.push(c);
        }
        (map, first)
    }

    /// Every way of numbering keys (a dense array, 32-bit slots, 64- and 128-bit ones) gives
    /// the oracle's classes, for keys drawn below the key space, many repeated, the largest
    /// key of the space among them.
    #[test]
    fn keys_numbered_as_first_seen_at_every_width() {
        let mut rng = StdRng::seed_from_u64(7);
        for bits in [10u32, 20, 31, 40, 63, 70, 127] {
            let space: Key = 1 << bits;
            let distinct: Vec<Key> =
                (0..500).map(|i| if i == 0 { space - 1 } else { rng.random_range(0..space) }).collect();
            let keys: Vec<Key> = (0..3_000).map(|_| distinct[rng.random_range(0..distinct.len())]).collect();
            if bits < 64 {
                let keys: Vec<u64> = keys.iter().map(|&k| k as u64).collect();
                assert_eq!(number_keys(space, &keys), by_map(&keys), "{bits}-bit space, 64-bit keys");
            }
            assert_eq!(number_keys(space, &keys), by_map(&keys), "{bits}-bit space, 128-bit keys");
        }
    }

    /// Many keys numbered in chunks on a pool of 3 threads, then merged (a dense index or a
    /// hash table, 64- or 128-bit keys), and by `number_keys`, which takes chunks only for few
    /// classes (one thread when nearly every key is its own class): the oracle's classes.
    #[test]
    fn many_keys_numbered_on_the_pool_as_first_seen() {
        let mut rng = StdRng::seed_from_u64(13);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let n = 3 * PARALLEL_KEYS + 123;
        for (classes, space, in_chunks) in
            [(50, 1 << 40, true), (2_000, 1 << 70, true), (900, 8_000, true), (4 * n, 1 << 40, false)]
        {
            let distinct: Vec<Key> = (0..classes).map(|_| rng.random_range(0..space)).collect();
            // The first keys repeat one class, so a merge that met the chunks out of order
            // would number another class first.
            let keys: Vec<Key> =
                (0..n).map(|i| distinct[if i < 1000 { 7 } else { rng.random_range(0..classes) }]).collect();
            assert_eq!(repeated(space, &keys), in_chunks, "{classes} classes: the path taken");
            let want = by_map(&keys);
            assert!(number_keys(space, &keys) == want, "{classes} classes, 128-bit keys");
            assert!(pool.install(|| number_in_chunks(space, &keys)) == want, "{classes} classes, in chunks");
            if space < 1 << 64 {
                let keys: Vec<u64> = keys.iter().map(|&k| k as u64).collect();
                assert!(number_keys(space, &keys) == want, "{classes} classes, 64-bit keys");
                assert!(pool.install(|| number_in_chunks(space, &keys)) == want, "{classes} classes, 64-bit chunks");
            }
        }
    }

    /// The probe's estimate of the classes it looks up: every code of both attributes among the
    /// members' (a node of few classes) is all of them; members with two of one attribute's 100
    /// codes and two of the other's 50, 0.02 × 0.04. Its sizes are the classes' sizes either way.
    #[test]
    fn the_probe_estimates_the_share_it_looks_up() {
        let hs: Vec<Arc<Hierarchy>> = vec![
            Arc::new(widths_hierarchy("a", 0, 99, &[10]).unwrap()),
            Arc::new(widths_hierarchy("b", 0, 49, &[5]).unwrap()),
        ];
        let (a, b): (Vec<u32>, Vec<u32>) = (0..5_000u32).map(|i| (i % 100, i % 50)).unzip();
        let from =
            Grouping { levels: vec![0, 0], sizes: vec![1; 5_000], ranges: vec![vec![], vec![]], codes: vec![a, b] };
        let probe = SizesProbe::new(&hs, &from, &[1, 1], &(0..100).collect::<Vec<_>>()).unwrap();
        assert_eq!(probe.passing_share(), 1.0);
        // Row i's class is (i % 100 / 10, i % 50 / 5): 20 classes of 5 residues mod 100, 250 rows.
        assert_eq!(probe.sizes(&from), vec![250; 20]);
        let probe = SizesProbe::new(&hs, &from, &[0, 0], &[0, 1, 100]).unwrap();
        assert!((probe.passing_share() - 0.02 * 0.04).abs() < 1e-12, "{}", probe.passing_share());
        assert_eq!(probe.sizes(&from), vec![50, 50]);
    }

    /// A source of more classes than [`PARALLEL_CLASSES`], generalized to a node of more
    /// classes than that too on a pool of 3 threads (keys packed or moved in jobs, columns,
    /// sizes and ranges gathered as jobs): the classes of the definition, numbered by their
    /// first source class, through `generalize_to` and through the lattice's keys alike, and
    /// the keys returned those of the result's classes.
    #[test]
    fn a_big_source_generalizes_as_the_definition() {
        let hs: Vec<Arc<Hierarchy>> = vec![
            Arc::new(widths_hierarchy("a", 0, 999, &[10, 100]).unwrap()),
            Arc::new(widths_hierarchy("b", 0, 499, &[5, 50]).unwrap()),
            Arc::new(widths_hierarchy("c", 0, 99, &[10]).unwrap()),
        ];
        let mut rng = StdRng::seed_from_u64(11);
        let n = PARALLEL_CLASSES + 40_000;
        let codes: Vec<Vec<u32>> =
            hs.iter().map(|h| (0..n).map(|_| rng.random_range(0..h.width(0) as u32)).collect()).collect();
        let from = Grouping {
            levels: vec![0; 3],
            sizes: (0..n).map(|_| rng.random_range(1..5u64)).collect(),
            ranges: codes.iter().map(|c| c.iter().map(|&x| (x, x)).collect()).collect(),
            codes,
        };
        let levels = [1u8, 1, 0];
        // The definition: each source class's ancestors, classes numbered as first met.
        let mut index: HashMap<Vec<u32>, usize> = HashMap::new();
        let mut want = Grouping {
            levels: levels.to_vec(),
            codes: vec![Vec::new(); 3],
            sizes: Vec::new(),
            ranges: vec![Vec::new(); 3],
        };
        let mut map = Vec::with_capacity(n);
        for c in 0..n {
            let key: Vec<u32> = (0..3).map(|a| hs[a].ancestor(0, levels[a] as usize, from.codes[a][c])).collect();
            let next = index.len();
            let id = *index.entry(key.clone()).or_insert(next);
            if id == next {
                want.sizes.push(0);
                for (a, &code) in key.iter().enumerate() {
                    want.codes[a].push(code);
                    want.ranges[a].push(from.ranges[a][c]);
                }
            }
            want.sizes[id] += from.sizes[c];
            for a in 0..3 {
                let (r, (lo, hi)) = (&mut want.ranges[a][id], from.ranges[a][c]);
                *r = (r.0.min(lo), r.1.max(hi));
            }
            map.push(id as u32);
        }
        assert!(want.len() > PARALLEL_CLASSES, "the node's classes take the pool's path too");
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let (g, m) = pool.install(|| generalize_to(&hs, &from, &levels)).unwrap();
        assert!(g == want && m == map, "generalize_to");
        let lattice = LatticeKeys::new(&hs).unwrap();
        let keys = lattice.of(&from);
        let (g, m, k) = pool.install(|| lattice.generalize(&hs, &from, &keys, &levels)).unwrap();
        assert_eq!(k, lattice.of(&g));
        assert!(g == want && m == map, "LatticeKeys::generalize");
    }
}
