//! Utility constraints (Definition 8) and the requirements Section 3.3 places on a constraint
//! set: no conflicts ("any two utility constraints should have the same range or two disjoint
//! ranges", "the same node or two nodes that have no common leaf-level descendant", "the same
//! set of diagnosis codes or two disjoint sets") and coverage of every value of the dataset.
//!
//! Read attribute by attribute, the no-conflict rule rejects the paper's own Table 4 (u1 has
//! Origin `All`, u4 `Africa`, a descendant), which Example 5 uses as a valid set. What the rule
//! guards against is a record that two constraints would generalize differently ("u states that
//! the least acceptable way ... is [40:50], whereas u′ states that ... [19:51] is still
//! acceptable"), so demographics are compared as tuples: two constraints conflict when some
//! record could lie in both (no attribute has disjoint elements) and their elements differ.
//! Code sets are compared on their own, as Definition 9 lets any constraint's code set serve
//! any record.
//!
//! Ranges are inclusive `[lo, hi]`, the convention of every release (`age_lo`/`age_hi`); the
//! paper's half-open `[0:12)` of Table 6 is `[0, 11]` over integers. Coverage is required per
//! record, not per attribute: record grouping (Step 1) needs one constraint containing all of a
//! record's demographics, which per-attribute coverage alone does not guarantee.

use super::F;
use super::data::RtTable;
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;

/// How many offending constraint pairs an error names before it only counts the rest.
const SHOWN: usize = 3;

/// The element v_{A_i} of a constraint for a demographic attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum DemographicElement {
    /// A numeric attribute: an inclusive range of values.
    Range { lo: f64, hi: f64 },
    /// A categorical attribute: a node of its hierarchy, by label.
    Node(String),
}

/// The element v_{A_{l+1}}: a set of diagnosis codes.
#[derive(Debug, Clone, PartialEq)]
pub enum CodeElement {
    /// Explicit codes (a label may also be a node of the code hierarchy: all codes under it).
    Codes(Vec<String>),
    /// Every code under a node of the code hierarchy (a 3-digit code, a section, a chapter).
    Node(String),
}

/// A utility constraint u = {v_{A_1}, ..., v_{A_l}, v_{A_{l+1}}} (Definition 8).
#[derive(Debug, Clone, PartialEq)]
pub struct UtilityConstraint {
    /// Named in errors (`u1`, `u2`, ... as in Table 4).
    name: String,
    /// One element per demographic attribute, in the table's attribute order.
    pub demographics: Vec<DemographicElement>,
    pub codes: CodeElement,
}

impl UtilityConstraint {
    pub fn new(name: &str, demographics: Vec<DemographicElement>, codes: CodeElement) -> Self {
        UtilityConstraint { name: name.to_string(), demographics, codes }
    }
}

/// A resolved demographic element: a range, or a hierarchy node (level, code).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Element {
    Range(f64, f64),
    Node(usize, u32),
}

impl Element {
    /// Does the element contain leaf `leaf` of `h`?
    pub(crate) fn contains_leaf(&self, h: &Hierarchy, leaf: u32) -> bool {
        match *self {
            Element::Range(lo, hi) => h.leaf_value(leaf).is_some_and(|v| lo <= v && v <= hi),
            Element::Node(j, code) => h.up(j)[leaf as usize] == code,
        }
    }

    /// No value of the attribute lies in both elements.
    fn disjoint(&self, other: &Element, h: &Hierarchy) -> bool {
        match (*self, *other) {
            (Element::Range(a, b), Element::Range(c, d)) => b < c || d < a,
            _ => !(0..h.leaf_count() as u32).any(|l| self.contains_leaf(h, l) && other.contains_leaf(h, l)),
        }
    }
}

/// One group of record grouping (Step 1): the records contained in one distinct demographic
/// element tuple, shared by every constraint in `constraints`.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub constraints: Vec<usize>,
    pub records: Vec<u32>,
}

/// A validated utility constraint set U.
#[derive(Debug, Clone)]
pub struct ConstraintSet {
    pub(crate) names: Vec<String>,
    /// Per constraint, its resolved demographic elements.
    pub(crate) elements: Vec<Vec<Element>>,
    /// Per constraint, its codes as sorted leaves of the code hierarchy.
    code_sets: Vec<Vec<u32>>,
    /// Per leaf of the code hierarchy, the index of the distinct code set holding it. Code sets
    /// are equal or disjoint, so a code belongs to at most one; two codes may be generalized
    /// together exactly when they share it (Definition 9, GenDiag Step 6).
    set_of_code: Vec<Option<u32>>,
}

impl ConstraintSet {
    /// Resolve `constraints` against the table's hierarchies, then check the no-conflict and
    /// coverage requirements of Section 3.3. Errors name the offending constraints.
    pub fn new(constraints: &[UtilityConstraint], table: &RtTable) -> Result<Self> {
        let cs = Self::resolve(constraints, table)?;
        cs.check_conflicts(table)?;
        cs.check_coverage(table)?;
        Ok(cs)
    }

    /// Resolve labels to hierarchy nodes and leaves, without the set-level requirements.
    pub(crate) fn resolve(constraints: &[UtilityConstraint], table: &RtTable) -> Result<Self> {
        if constraints.is_empty() {
            return Err(AnonError::argument(F, "constraints", "the utility constraint set is empty"));
        }
        let (mut names, mut elements, mut code_sets) = (Vec::new(), Vec::new(), Vec::new());
        for u in constraints {
            elements.push(resolve_demographics(u, table)?);
            code_sets.push(resolve_codes(u, &table.codes.hierarchy)?);
            names.push(u.name.clone());
        }
        let mut set_of_code = vec![None; table.codes.hierarchy.leaf_count()];
        let mut distinct: Vec<&Vec<u32>> = Vec::new();
        for set in &code_sets {
            let id = distinct.iter().position(|d| *d == set).unwrap_or_else(|| {
                distinct.push(set);
                distinct.len() - 1
            });
            for &c in set {
                set_of_code[c as usize].get_or_insert(id as u32);
            }
        }
        Ok(ConstraintSet { names, elements, code_sets, set_of_code })
    }

    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The distinct code set holding a leaf code, if any.
    pub(crate) fn code_set(&self, leaf: u32) -> Option<u32> {
        self.set_of_code.get(leaf as usize).copied().flatten()
    }
    pub fn set_of_code(&self) -> &[Option<u32>] {
        &self.set_of_code
    }

    /// The no-conflict requirement: for every attribute, any two constraints have equal or
    /// disjoint elements.
    pub(crate) fn check_conflicts(&self, table: &RtTable) -> Result<()> {
        let mut found: Vec<String> = Vec::new();
        for a in 0..self.len() {
            for b in a + 1..self.len() {
                let (x, y) = (&self.elements[a], &self.elements[b]);
                let qs = &table.demographics;
                // Constraints whose demographics no record can share never compete for a record
                // (Table 4's u1 and u4: All ⊃ Africa, but [19:50] and [51] are disjoint).
                let apart = x.iter().zip(y).zip(qs).any(|((e, f), q)| e.disjoint(f, &q.hierarchy));
                if !apart {
                    for ((e, f), q) in x.iter().zip(y).zip(qs) {
                        if e != f {
                            found.push(format!("'{}' and '{}' on '{}'", self.names[a], self.names[b], q.name));
                        }
                    }
                }
                let (x, y) = (&self.code_sets[a], &self.code_sets[b]);
                if x != y && x.iter().any(|c| y.binary_search(c).is_ok()) {
                    found.push(format!(
                        "'{}' and '{}' on the codes of '{}'",
                        self.names[a], self.names[b], table.codes.name
                    ));
                }
            }
        }
        if found.is_empty() {
            return Ok(());
        }
        let more = if found.len() > SHOWN { format!(" and {} more", found.len() - SHOWN) } else { String::new() };
        found.truncate(SHOWN);
        Err(AnonError::argument(
            F,
            "constraints",
            format!(
                "conflicting utility constraints {}{more}: elements of one attribute must be equal or disjoint \
                 (ranges equal or disjoint, nodes equal or without a common leaf, code sets equal or disjoint)",
                found.join(", ")
            ),
        ))
    }

    /// The coverage requirement: every record's demographics lie in one constraint and every
    /// diagnosis code in some constraint's code set. Counts offenders, never quotes values.
    pub(crate) fn check_coverage(&self, table: &RtTable) -> Result<()> {
        let uncovered: Vec<usize> = (0..table.len()).filter(|&r| self.constraint_of(table, r).is_none()).collect();
        if let Some(first) = uncovered.first() {
            return Err(AnonError::argument(
                F,
                "constraints",
                format!(
                    "do not cover the data: {} record(s) have demographics contained in no utility constraint \
                     (first: record {first})",
                    uncovered.len()
                ),
            ));
        }
        let missing: usize =
            table.codes.records.iter().map(|r| r.iter().filter(|&&c| self.code_set(c).is_none()).count()).sum();
        if missing > 0 {
            return Err(AnonError::argument(
                F,
                "constraints",
                format!(
                    "do not cover the data: {missing} diagnosis code occurrence(s) are in no utility constraint's \
                     code set"
                ),
            ));
        }
        Ok(())
    }

    /// The first constraint whose demographic elements all contain record `r`'s values.
    pub(crate) fn constraint_of(&self, table: &RtTable, r: usize) -> Option<usize> {
        self.elements
            .iter()
            .position(|u| u.iter().zip(&table.demographics).all(|(e, q)| e.contains_leaf(&q.hierarchy, q.codes[r])))
    }

    /// Record grouping (Step 1): one group per distinct demographic element tuple, holding the
    /// records it contains. Without conflicts distinct tuples are disjoint, so every covered
    /// record is in exactly one group. Groups with no record are left out.
    pub fn group(&self, table: &RtTable) -> Result<Vec<Group>> {
        let mut tuples: Vec<usize> = Vec::new();
        let mut groups: Vec<Group> = Vec::new();
        for (u, e) in self.elements.iter().enumerate() {
            match tuples.iter().position(|&t| self.elements[t] == *e) {
                Some(g) => groups[g].constraints.push(u),
                None => {
                    tuples.push(u);
                    groups.push(Group { constraints: vec![u], records: Vec::new() });
                }
            }
        }
        for r in 0..table.len() {
            let u = self
                .constraint_of(table, r)
                .ok_or_else(|| AnonError::argument(F, "constraints", format!("do not cover the data (record {r})")))?;
            let g = tuples.iter().position(|&t| self.elements[t] == self.elements[u]).unwrap_or(0);
            groups[g].records.push(r as u32);
        }
        groups.retain(|g| !g.records.is_empty());
        Ok(groups)
    }
}

fn resolve_demographics(u: &UtilityConstraint, table: &RtTable) -> Result<Vec<Element>> {
    let l = table.attributes();
    if u.demographics.len() != l {
        return Err(AnonError::argument(
            F,
            "constraints",
            format!(
                "constraint '{}' has {} demographic elements, the table has {l} attributes",
                u.name,
                u.demographics.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(l);
    for (e, q) in u.demographics.iter().zip(&table.demographics) {
        let h = &q.hierarchy;
        let bad =
            |m: String| AnonError::argument(F, "constraints", format!("constraint '{}' on '{}': {m}", u.name, q.name));
        out.push(match e {
            DemographicElement::Range { lo, hi } if h.is_numeric() => {
                if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                    return Err(bad(format!("range [{lo}, {hi}] is not a range")));
                }
                Element::Range(*lo, *hi)
            }
            DemographicElement::Node(label) if !h.is_numeric() => {
                let node = (0..=h.height()).find_map(|j| h.node_by_label(j, label).map(|c| Element::Node(j, c)));
                node.ok_or_else(|| bad(format!("'{label}' is not a node of its hierarchy")))?
            }
            DemographicElement::Range { .. } => {
                return Err(bad("a categorical attribute needs a hierarchy node".into()));
            }
            DemographicElement::Node(_) => return Err(bad("a numeric attribute needs a range".into())),
        });
    }
    Ok(out)
}

/// Leaves under the node labelled `label` (a leaf is its own), searching from the leaves up.
fn leaves_of(h: &Hierarchy, label: &str) -> Option<Vec<u32>> {
    if let Some(leaf) = h.leaf_of_label(label) {
        return Some(vec![leaf]);
    }
    (1..=h.height()).find_map(|j| {
        let node = h.node_by_label(j, label)?;
        Some((0..h.leaf_count() as u32).filter(|&l| h.up(j)[l as usize] == node).collect())
    })
}

fn resolve_codes(u: &UtilityConstraint, h: &Hierarchy) -> Result<Vec<u32>> {
    let labels: Vec<&str> = match &u.codes {
        CodeElement::Codes(c) => c.iter().map(|s| s.trim()).collect(),
        CodeElement::Node(n) => vec![n.trim()],
    };
    if labels.is_empty() {
        return Err(AnonError::argument(F, "constraints", format!("constraint '{}' has an empty code set", u.name)));
    }
    let mut out = Vec::new();
    for label in labels {
        // A constraint's code is the owner's text, not a patient's: naming it is safe.
        let leaves = leaves_of(h, label).ok_or_else(|| {
            AnonError::argument(
                F,
                "constraints",
                format!("constraint '{}': code '{label}' is not in the code hierarchy of '{}'", u.name, h.attribute()),
            )
        })?;
        out.extend(leaves);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
