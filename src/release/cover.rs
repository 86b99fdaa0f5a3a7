//! What a released label or generalized code covers: the one resolver from released text to
//! hierarchy leaves. `anon_metrics` (src/metrics/decode.rs) and the query harness (src/eval)
//! both read releases through it, so a value means the same in every report.
//!
//! The rules, one set for every reader:
//! 1. A label names the node of that label at the LOWEST level that has it, the first such
//!    node of that level: a leaf label wins over a node of the same name (ARX's `*` root is
//!    never reused below the top).
//! 2. A set-valued element is a code, a node of the code hierarchy (rule 1), or a generalized
//!    code `(a, b, ...)` (ArtUC Def. 2) that covers the union of what its parts cover (blank
//!    parts are skipped). Codes are compared up to their dots when no label matches exactly:
//!    ICD-9-CM codes are written both ways (`053.71` in the papers, `05371` in the CMS files
//!    and the bundled RT datasets), and the query harness already matches a query's code to a
//!    released one up to its dots (`eval::dist::element_presence`). Dots are significant in
//!    quasi-identifier labels, which are words, not codes.
//! 3. `*`, the suppression marker every method writes into a suppressed record's labels (k-anon,
//!    h-ceiling, IPA, ArtUC; `src/verify` tests for it too), covers the whole domain: it names
//!    the root, whatever the root's label (`*****` for a masking hierarchy, `ANY` in a loaded
//!    one), unless some node is labelled `*` itself (rule 1 then). Writing the root's label in
//!    suppressed rows instead would make a suppressed record look generalized to the root and
//!    break every reader that finds suppressed records by their `*`.
//! 4. Text that names no node is an error for the caller to report with the column (never
//!    quoting the value: a leaf label is a patient's original value). A release of this table
//!    publishes only its hierarchy's labels, so such text means the release is of another
//!    table; guessing (e.g. letting an unknown code stand for itself, as the query harness once
//!    did while `anon_metrics` refused it) would give the two reports different releases.
//!
//! Before this module the harness (eval/dist.rs) ignored dots and let an unknown code cover
//! itself, while `anon_metrics` (metrics/decode.rs) compared exactly and refused unknown codes;
//! tests/release_cover.rs holds both readers to the rules above.

use crate::hierarchy::Hierarchy;
use std::collections::HashMap;

/// The label every method writes into a suppressed record's quasi-identifiers (rule 3).
pub(crate) const SUPPRESSED: &str = "*";

/// Label → node index of one hierarchy, with the leaves under every node.
#[derive(Debug)]
pub(crate) struct LabelIndex {
    node: HashMap<String, (u8, u32)>,
    /// Labels without their dots (rule 2), for codes only; the first label of a dotless form wins.
    undotted: HashMap<String, (u8, u32)>,
    /// `leaves[level][node]`: the leaves under each node, ascending.
    leaves: Vec<Vec<Vec<u32>>>,
}

impl LabelIndex {
    pub(crate) fn new(h: &Hierarchy) -> Self {
        let (mut node, mut undotted) = (HashMap::new(), HashMap::new());
        let mut leaves = Vec::with_capacity(h.levels().len());
        for (j, level) in h.levels().iter().enumerate() {
            for (c, l) in level.labels.iter().enumerate() {
                node.entry(l.clone()).or_insert((j as u8, c as u32));
                if l.contains('.') {
                    undotted.entry(l.replace('.', "")).or_insert((j as u8, c as u32));
                }
            }
            let mut by_node: Vec<Vec<u32>> = vec![Vec::new(); h.width(j)];
            for (leaf, &n) in h.up(j).iter().enumerate() {
                by_node[n as usize].push(leaf as u32);
            }
            leaves.push(by_node);
        }
        // Rule 3: the suppression marker names the (single) root when no node carries it.
        node.entry(SUPPRESSED.to_string()).or_insert((h.height() as u8, 0));
        LabelIndex { node, undotted, leaves }
    }

    /// The node a quasi-identifier label names (rule 1).
    pub(crate) fn node(&self, label: &str) -> Option<(u8, u32)> {
        self.node.get(label).copied()
    }

    /// The leaves under the node a quasi-identifier label names (rule 1).
    pub(crate) fn leaves(&self, label: &str) -> Option<&[u32]> {
        self.node(label).map(|n| self.node_leaves(n))
    }

    /// The leaves under node `code` of level `level`, ascending.
    pub(crate) fn node_leaves(&self, (level, code): (u8, u32)) -> &[u32] {
        &self.leaves[level as usize][code as usize]
    }

    /// The node a code names (rules 1 and 2): exactly, else up to the dots on either side.
    pub(crate) fn code_node(&self, code: &str) -> Option<(u8, u32)> {
        self.node(code).or_else(|| {
            let bare = code.replace('.', "");
            self.node.get(&bare).or_else(|| self.undotted.get(&bare)).copied()
        })
    }

    /// The leaves a released set-valued element covers (rule 2), ascending and distinct; `None`
    /// when any part names no node (rule 4).
    pub(crate) fn element(&self, element: &str) -> Option<Vec<u32>> {
        let e = element.trim();
        match e.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            Some(inner) => {
                let mut out = Vec::new();
                for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    out.extend_from_slice(self.node_leaves(self.code_node(part)?));
                }
                out.sort_unstable();
                out.dedup();
                Some(out)
            }
            None => Some(self.node_leaves(self.code_node(e)?).to_vec()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::{HierarchyKind, from_rows};

    fn hierarchy(kind: HierarchyKind, rows: &[[&str; 3]]) -> Hierarchy {
        let rows = rows.iter().enumerate().map(|(i, r)| (i + 1, r.iter().map(|s| s.to_string()).collect())).collect();
        from_rows(rows, "c", kind).unwrap()
    }

    /// Codes written with dots in the hierarchy (the papers) and without (the CMS files).
    fn codes() -> (Hierarchy, LabelIndex) {
        let h = hierarchy(
            HierarchyKind::Codes,
            &[["053.20", "053", "*"], ["053.71", "053", "*"], ["4019", "401", "*"], ["4011", "401", "*"]],
        );
        let index = LabelIndex::new(&h);
        (h, index)
    }

    fn labels(h: &Hierarchy, leaves: Option<Vec<u32>>) -> Option<Vec<&str>> {
        leaves.map(|l| l.into_iter().map(|l| h.label(0, l)).collect())
    }

    #[test]
    fn codes_nodes_and_generalized_codes_cover_their_leaves() {
        let (h, ix) = codes();
        assert_eq!(labels(&h, ix.element("053.71")), Some(vec!["053.71"]));
        assert_eq!(labels(&h, ix.element("401")), Some(vec!["4019", "4011"]));
        assert_eq!(labels(&h, ix.element(" (053.71, 053.20,) ")), Some(vec!["053.20", "053.71"]));
        assert_eq!(labels(&h, ix.element("(053, 4011)")), Some(vec!["053.20", "053.71", "4011"]));
    }

    /// Rule 2: dots do not matter in a code, on either side (the harness ignored them on the
    /// release's side only; anon_metrics compared exactly).
    #[test]
    fn codes_match_up_to_their_dots() {
        let (h, ix) = codes();
        assert_eq!(labels(&h, ix.element("05371")), Some(vec!["053.71"]));
        assert_eq!(labels(&h, ix.element("401.9")), Some(vec!["4019"]));
        assert_eq!(labels(&h, ix.element("(05320,401.1)")), Some(vec!["053.20", "4011"]));
        // Dots are dropped, never digits: 0537 is no code here.
        assert_eq!(ix.element("053.7"), None);
    }

    /// Rule 4: an unknown code is no code (the harness let it cover itself; anon_metrics refused
    /// it). One unknown part makes the whole generalized code unknown.
    #[test]
    fn an_unknown_code_covers_nothing() {
        let (_, ix) = codes();
        assert_eq!(ix.element("999.9"), None);
        assert_eq!(ix.element("(053.20, 999.9)"), None);
        assert_eq!(ix.element(""), None);
    }

    /// Rule 3: a suppressed record's `*` covers every leaf when the root has another label (a
    /// masking hierarchy's `*****`), and names a node labelled `*` when there is one.
    #[test]
    fn the_suppression_marker_names_the_root_whatever_its_label() {
        let h = hierarchy(HierarchyKind::Categorical, &[["02139", "021**", "*****"], ["02141", "021**", "*****"]]);
        let ix = LabelIndex::new(&h);
        assert_eq!(ix.node(SUPPRESSED), ix.node("*****"));
        assert_eq!(ix.leaves(SUPPRESSED), Some(&[0, 1][..]));
        let h = hierarchy(HierarchyKind::Categorical, &[["a", "*", "ANY"], ["b", "b", "ANY"]]);
        let ix = LabelIndex::new(&h);
        assert_eq!(ix.node(SUPPRESSED), Some((1, 0)));
        assert_eq!(ix.leaves(SUPPRESSED), Some(&[0][..]));
    }

    /// Rule 1 for quasi-identifier labels: the lowest level wins, and dots are part of a word.
    #[test]
    fn a_label_names_its_lowest_node_and_dots_count() {
        let h = hierarchy(HierarchyKind::Categorical, &[["U.S.", "America", "*"], ["America", "America", "*"]]);
        let ix = LabelIndex::new(&h);
        assert_eq!(ix.node("America"), Some((0, 1)));
        assert_eq!(ix.leaves("America"), Some(&[1][..]));
        assert_eq!(ix.leaves("*"), Some(&[0, 1][..]));
        assert_eq!(ix.node("US"), None);
    }
}
