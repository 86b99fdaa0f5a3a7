//! (k, k^m)-anonymity of an RT-dataset (Poulis et al. 2013; Koufogiannis et al., ArtUC, Def. 1
//! and Conditions 1–2 of Section 3.2): an attacker who knows a patient's demographics and up to
//! m of the patient's diagnosis codes cannot narrow the patient down to fewer than k records.
//!
//! Checked per demographic class (rows with identical published quasi-identifier columns):
//! 1. the class has at least k records (Condition 1);
//! 2. for every record r and every set K of at most m codes that r may hold, at least k records
//!    of the class may hold all of K (Condition 2).
//!
//! "May hold": a generalized code is "interpreted as any subset of the diagnosis codes it has
//! replaced" (ArtUC, Section 3.2), so a record may hold every code covered by any of its items.
//! An item covers: the leaves under it when it is a node of the code hierarchy; the listed
//! codes when it is a list `(053.20,053.71)`; itself otherwise.
//!
//! Enumeration works on "atoms": codes covered by exactly the same records of the class are
//! interchangeable for the support of any combination, so K ranges over sets of at most m
//! atoms. With consistent generalization the atoms are the class's distinct items.

use super::Verdict;
use super::classes::{Layout, texts};
use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, code_lists};
use datafusion::arrow::array::Array;
use datafusion::logical_expr::Expr;
use datafusion::prelude::{SessionContext, ident};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Combinations enumerated across the whole release before the check gives up.
pub(crate) const MAX_COMBINATIONS: u64 = 10_000_000;

/// One demographic class: its description and each record's covered codes (interned ids).
#[derive(Debug, Clone)]
pub struct KmClass {
    pub label: String,
    pub records: Vec<Vec<u32>>,
}

/// The first failure found and the count of failures.
#[derive(Default)]
struct Failures {
    count: i64,
    first: Option<String>,
}

impl Failures {
    fn add(&mut self, f: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(f());
        }
    }
}

/// Atoms of a class: (per record, its sorted atom ids; per atom, its record bitset and one code).
fn atoms(class: &KmClass) -> (Vec<Vec<u32>>, Vec<Vec<u64>>, Vec<u32>) {
    let words = class.records.len().div_ceil(64);
    let mut incidence: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for (r, codes) in class.records.iter().enumerate() {
        for &c in codes {
            incidence.entry(c).or_insert_with(|| vec![0; words])[r / 64] |= 1 << (r % 64);
        }
    }
    let mut atom_of: HashMap<Vec<u64>, u32> = HashMap::new();
    let (mut bits, mut example) = (Vec::new(), Vec::new());
    let mut code_atom: HashMap<u32, u32> = HashMap::new();
    for (code, set) in incidence {
        let next = bits.len() as u32;
        let a = *atom_of.entry(set.clone()).or_insert_with(|| {
            bits.push(set);
            example.push(code);
            next
        });
        code_atom.insert(code, a);
    }
    let per_record = class
        .records
        .iter()
        .map(|codes| {
            let mut a: Vec<u32> = codes.iter().map(|c| code_atom[c]).collect();
            a.sort_unstable();
            a.dedup();
            a
        })
        .collect();
    (per_record, bits, example)
}

fn binomial_sum(n: u64, m: u64) -> u64 {
    let (mut total, mut term) = (0u64, 1u64);
    for j in 1..=m.min(n) {
        term = term.saturating_mul(n - j + 1) / j;
        total = total.saturating_add(term);
    }
    total
}

/// Visit every non-empty subset of `items` of size at most `m`, size by size, each size in
/// lexicographic order of positions. Iterative on purpose: GenDiag walks its subsets depth
/// first, and the check must not share an enumeration (or its bugs) with the method it checks.
fn for_each_combination(items: &[u32], m: usize, mut visit: impl FnMut(&[u32])) {
    let n = items.len();
    let mut combo = Vec::with_capacity(m);
    for size in 1..=m.min(n) {
        let mut at: Vec<usize> = (0..size).collect();
        loop {
            combo.clear();
            combo.extend(at.iter().map(|&i| items[i]));
            visit(&combo);
            // The rightmost position that can still move right, then its followers packed after it.
            let Some(p) = (0..size).rev().find(|&p| at[p] < n - size + p) else { break };
            at[p] += 1;
            for q in p + 1..size {
                at[q] = at[q - 1] + 1;
            }
        }
    }
}

fn support(bits: &[Vec<u64>], combo: &[u32]) -> u64 {
    let words = bits[combo[0] as usize].len();
    (0..words).map(|w| combo.iter().fold(u64::MAX, |acc, &a| acc & bits[a as usize][w]).count_ones() as u64).sum()
}

/// Check Conditions 1–2 on every class; `names` maps code ids back to codes for the detail.
/// Errors when more than [`MAX_COMBINATIONS`] combinations would be enumerated.
pub fn check_km_classes(classes: &[KmClass], names: &[String], k: u64, m: u64, at: (&str, &str)) -> Result<Verdict> {
    let mut fails = Failures::default();
    let mut budget = 0u64;
    for class in classes {
        if (class.records.len() as u64) < k {
            fails.add(|| format!("class ({}) has {} records < k={k}", class.label, class.records.len()));
            continue;
        }
        let (per_record, bits, example) = atoms(class);
        let mut seen: HashSet<Vec<u32>> = HashSet::new();
        for rec in &per_record {
            budget = budget.saturating_add(binomial_sum(rec.len() as u64, m));
            if budget > MAX_COMBINATIONS {
                return Err(AnonError::column(
                    at.0,
                    at.1,
                    format!("more than {MAX_COMBINATIONS} code combinations of size <= {m} to check; lower m"),
                ));
            }
            for_each_combination(rec, m as usize, |combo| {
                if seen.contains(combo) {
                    return;
                }
                seen.insert(combo.to_vec());
                let s = support(&bits, combo);
                if s < k {
                    fails.add(|| {
                        let codes: Vec<&str> =
                            combo.iter().map(|&a| names[example[a as usize] as usize].as_str()).collect();
                        format!(
                            "in class ({}), codes {{{}}} are held by {s} records < k={k}",
                            class.label,
                            codes.join(", ")
                        )
                    });
                }
            });
        }
    }
    let records: usize = classes.iter().map(|c| c.records.len()).sum();
    Ok(match fails.first {
        None => Verdict::holds(format!("{} classes, {records} records", classes.len())),
        Some(first) => Verdict::fails(fails.count, format!("{} violations; first: {first}", fails.count)),
    })
}

/// Codes covered by one published item.
pub(super) struct Expander<'a> {
    hierarchy: Option<&'a Hierarchy>,
    cache: HashMap<String, Vec<String>>,
}

impl<'a> Expander<'a> {
    pub(super) fn new(hierarchy: Option<&'a Hierarchy>) -> Self {
        Expander { hierarchy, cache: HashMap::new() }
    }

    fn node_leaves(&self, label: &str) -> Option<Vec<String>> {
        let h = self.hierarchy?;
        (1..=h.height()).find_map(|j| {
            let node = h.node_by_label(j, label)?;
            let up = h.up(j);
            Some((0..h.leaf_count()).filter(|&l| up[l] == node).map(|l| h.label(0, l as u32).to_string()).collect())
        })
    }

    pub(super) fn expand(&mut self, item: &str) -> Vec<String> {
        let item = item.trim();
        if let Some(v) = self.cache.get(item) {
            return v.clone();
        }
        let out = if let Some(leaves) = self.node_leaves(item) {
            leaves
        } else if let Some(inner) = item.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
            let parts: Vec<String> = inner.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect();
            parts.iter().flat_map(|p| self.node_leaves(p).unwrap_or_else(|| vec![p.clone()])).collect()
        } else {
            vec![item.to_string()]
        };
        self.cache.insert(item.to_string(), out.clone());
        out
    }
}

/// Read the release: non-suppressed rows grouped by demographics, each with its covered codes.
pub(crate) async fn verify_km(
    ctx: &SessionContext,
    layout: &Layout,
    column: &str,
    hierarchy: Option<&Hierarchy>,
    k: u64,
    m: u64,
) -> Result<Verdict> {
    let df = ctx.table(layout.release.as_str()).await?;
    df.schema().field_with_unqualified_name(column).map_err(|_| {
        AnonError::column(&layout.release, column, "is missing: the original table declares it set-valued")
    })?;
    let mut select: Vec<Expr> = layout.key_exprs();
    select.push(ident(column).alias("__items"));
    let batches = df.filter(!layout.suppressed())?.select(select)?.collect().await?;
    let nkeys = layout.key_columns().len();
    let mut expander = Expander::new(hierarchy);
    let (mut names, mut ids): (Vec<String>, HashMap<String, u32>) = (Vec::new(), HashMap::new());
    let mut classes: BTreeMap<Vec<Option<String>>, Vec<Vec<u32>>> = BTreeMap::new();
    for b in &batches {
        let keys: Vec<Vec<Option<String>>> = (0..nkeys).map(|i| texts(b.column(i))).collect::<Result<_>>()?;
        // A list, or a delimited string split as every function splits code sets (module doc).
        let items = code_lists(&layout.release, column, b.column(nkeys))?;
        for r in 0..b.num_rows() {
            let mut codes: Vec<u32> = Vec::new();
            if items.is_valid(r) {
                for item in texts(&items.value(r))?.into_iter().flatten() {
                    for code in expander.expand(&item) {
                        let next = names.len() as u32;
                        codes.push(*ids.entry(code.clone()).or_insert_with(|| {
                            names.push(code);
                            next
                        }));
                    }
                }
            }
            codes.sort_unstable();
            codes.dedup();
            classes.entry(keys.iter().map(|k| k[r].clone()).collect()).or_default().push(codes);
        }
    }
    let classes: Vec<KmClass> =
        classes.into_iter().map(|(key, records)| KmClass { label: layout.describe(&key), records }).collect();
    check_km_classes(&classes, &names, k, m, (&layout.release, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: (&str, &str) = ("r", "codes");

    fn class(records: Vec<Vec<u32>>) -> KmClass {
        KmClass { label: "c".into(), records }
    }

    #[test]
    fn every_combination_is_visited_once() {
        let items = [2u32, 3, 5, 7, 11, 13];
        for m in 0..=7 {
            let mut seen = Vec::new();
            for_each_combination(&items, m, |c| seen.push(c.to_vec()));
            assert_eq!(seen.len() as u64, binomial_sum(items.len() as u64, m as u64), "m={m}");
            assert!(seen.iter().all(|c| !c.is_empty() && c.len() <= m && c.windows(2).all(|w| w[0] < w[1])));
            let distinct: HashSet<Vec<u32>> = seen.iter().cloned().collect();
            assert_eq!(distinct.len(), seen.len(), "m={m}");
        }
    }

    #[test]
    fn combinations_need_support() {
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        // {a,b}, {a,b}: every combination held by 2 records.
        assert!(check_km_classes(&[class(vec![vec![0, 1], vec![0, 1]])], &names, 2, 2, AT).unwrap().holds);
        // {a,b}, {a,c}: singles a ok, b and c held by 1 record.
        let o = check_km_classes(&[class(vec![vec![0, 1], vec![0, 2]])], &names, 2, 1, AT).unwrap();
        assert!(!o.holds && o.violations == 2, "{o:?}");
        // {a,b}, {a,b}, {a}, {b} with k=2: pairs {a,b} held by 2, singles by 3: holds for m=2.
        let c = class(vec![vec![0, 1], vec![0, 1], vec![0], vec![1]]);
        assert!(check_km_classes(std::slice::from_ref(&c), &names, 2, 2, AT).unwrap().holds);
        assert!(!check_km_classes(&[c], &names, 3, 2, AT).unwrap().holds);
        assert_eq!(binomial_sum(4, 2), 10);
    }
}
