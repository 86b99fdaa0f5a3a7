//! The per-group comparison of original and estimated answers, and its summary.
//!
//! Relative error of a group: |estimate - original| / max(|original|, 1). The floor of 1 keeps
//! groups whose original answer is 0 (an estimate of 0.4 patients where there are none is an
//! error of 0.4, not infinity) and leaves every other count untouched. A group missing on one
//! side answers 0 for COUNT and SUM; for AVG it has no answer.
//!
//! The summary keeps apart what one mean would blur (docs/query_error.md): the headline ARE
//! (ArtUC paper, Def. 7) is over the original's groups, the questions an analyst of the
//! original would ask; the groups the estimate lacks, and the spurious groups it invents (with
//! the release's mass in them), are counted beside it; the ARE over the union of both sides'
//! groups, the figure the h-ceiling paper's Fig. 11 used, stays available.

use super::dist::Val;
use crate::error::Result;
use crate::numbers::significant;
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::cmp::Ordering;
use std::sync::Arc;

/// Which side has a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Both the original and the estimate.
    Both,
    /// The original only: the release puts no mass there.
    Missing,
    /// The estimate only: the release puts mass where the original has no record.
    Spurious,
}

impl Presence {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Presence::Both => "both",
            Presence::Missing => "missing",
            Presence::Spurious => "spurious",
        }
    }
}

/// One group of one query.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupError {
    pub(crate) key: String,
    pub(crate) original: Option<f64>,
    pub(crate) estimate: Option<f64>,
    pub(crate) presence: Presence,
    /// The release's estimated records in the group (for COUNT(col), SUM and AVG: those with a
    /// value of the measure); 0 for a missing group.
    pub(crate) mass: f64,
}

impl GroupError {
    /// A group both sides answer, with the estimate's records equal to the estimate (COUNT(*)).
    pub fn both(key: impl Into<String>, original: f64, estimate: f64) -> Self {
        GroupError {
            key: key.into(),
            original: Some(original),
            estimate: Some(estimate),
            presence: Presence::Both,
            mass: estimate,
        }
    }
    pub(crate) fn abs_error(&self) -> Option<f64> {
        Some((self.estimate? - self.original?).abs())
    }
    pub(crate) fn rel_error(&self) -> Option<f64> {
        Some(self.abs_error()? / self.original?.abs().max(1.0))
    }
}

/// The summary of one set of groups: how many have both answers, totals (counts and sums
/// only), the estimate's records, mean absolute error and ARE over those with both answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    pub groups: usize,
    total_original: Option<f64>,
    total_estimate: Option<f64>,
    pub mass: f64,
    mean_abs_error: Option<f64>,
    pub are: Option<f64>,
}

/// The summary rows: `original` (the original's groups: the headline ARE), `missing` and
/// `spurious` (their counts, `groups`, are of all such groups, answered or not), and `union`
/// (every group: the h-ceiling paper's figure).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    original: Part,
    pub missing: Part,
    pub spurious: Part,
    pub union: Part,
}

impl Summary {
    /// The headline: ARE over the original's groups.
    pub fn are(&self) -> Option<f64> {
        self.original.are
    }
}

#[derive(Debug, Clone)]
pub struct QueryReport {
    pub(crate) query: String,
    pub(crate) groups: Vec<GroupError>,
    /// COUNT and SUM answers add up across groups; AVG ones do not.
    pub(crate) additive: bool,
}

/// Group order: numbers by value before text, part by part.
pub(crate) fn compare_keys(a: &[Val], b: &[Val]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Val::Num(p), Val::Num(q)) => p.total_cmp(q),
            (Val::Num(_), _) => Ordering::Less,
            (_, Val::Num(_)) => Ordering::Greater,
            (p, q) => p.key_text().cmp(&q.key_text()),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// The summary rows' labels, in output order, with the `status` each row carries.
const SUMMARY_ROWS: [(&str, &str); 4] = [
    ("SUMMARY", "original"),
    ("SUMMARY missing", "missing"),
    ("SUMMARY spurious", "spurious"),
    ("SUMMARY union", "union"),
];

impl QueryReport {
    pub fn summary(&self) -> Summary {
        let of = |keep: &dyn Fn(Presence) -> bool| self.part(keep);
        Summary {
            original: of(&|p| p != Presence::Spurious),
            missing: of(&|p| p == Presence::Missing),
            spurious: of(&|p| p == Presence::Spurious),
            union: of(&|_| true),
        }
    }

    fn part(&self, keep: &dyn Fn(Presence) -> bool) -> Part {
        let set: Vec<&GroupError> = self.groups.iter().filter(|g| keep(g.presence)).collect();
        let both: Vec<&GroupError> = set.iter().copied().filter(|g| g.abs_error().is_some()).collect();
        let mean = |f: &dyn Fn(&GroupError) -> Option<f64>| {
            (!both.is_empty()).then(|| both.iter().filter_map(|g| f(g)).sum::<f64>() / both.len() as f64)
        };
        let total =
            |f: &dyn Fn(&GroupError) -> Option<f64>| self.additive.then(|| set.iter().filter_map(|g| f(g)).sum());
        Part {
            groups: set.len(),
            total_original: total(&|g| g.original),
            total_estimate: total(&|g| g.estimate),
            mass: set.iter().map(|g| g.mass).sum::<f64>() + 0.0,
            mean_abs_error: mean(&GroupError::abs_error),
            are: mean(&GroupError::rel_error),
        }
    }

    pub fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("group_key", DataType::Utf8, false),
            Field::new("original", DataType::Float64, true),
            Field::new("estimate", DataType::Float64, true),
            Field::new("abs_error", DataType::Float64, true),
            Field::new("rel_error", DataType::Float64, true),
            Field::new("status", DataType::Utf8, false),
            Field::new("groups", DataType::Int64, true),
            Field::new("est_records", DataType::Float64, false),
        ]))
    }

    /// Every row's cells: one row per group, then the summary rows (original and estimate:
    /// totals; abs_error: mean absolute error; rel_error: ARE; groups: how many).
    fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = self
            .groups
            .iter()
            .map(|g| Row {
                key: g.key.clone(),
                values: [g.original, g.estimate, g.abs_error(), g.rel_error()],
                status: g.presence.name(),
                groups: None,
                mass: g.mass,
            })
            .collect();
        let s = self.summary();
        for ((key, status), p) in SUMMARY_ROWS.into_iter().zip([s.original, s.missing, s.spurious, s.union]) {
            rows.push(Row {
                key: key.into(),
                values: [p.total_original, p.total_estimate, p.mean_abs_error, p.are],
                status,
                groups: Some(p.groups as i64),
                mass: p.mass,
            });
        }
        rows
    }

    pub fn to_batch(&self) -> Result<RecordBatch> {
        let rows = self.rows();
        // Estimates are sums of fractional records: 12 significant digits print 434, not
        // 434.00000000000006, and an error of nothing as 0, not -0 (src/numbers.rs).
        let tidy = |x: f64| significant(x, 12);
        let value =
            |i: usize| -> ArrayRef { Arc::new(rows.iter().map(|r| r.values[i].map(tidy)).collect::<Float64Array>()) };
        let cols: Vec<ArrayRef> = vec![
            Arc::new(rows.iter().map(|r| Some(r.key.as_str())).collect::<StringArray>()),
            value(0),
            value(1),
            value(2),
            value(3),
            Arc::new(rows.iter().map(|r| Some(r.status)).collect::<StringArray>()),
            Arc::new(rows.iter().map(|r| r.groups).collect::<Int64Array>()),
            Arc::new(rows.iter().map(|r| Some(tidy(r.mass))).collect::<Float64Array>()),
        ];
        Ok(RecordBatch::try_new(Self::schema(), cols)?)
    }

    /// A plain-text table for the command line.
    pub fn to_text(&self) -> String {
        let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.4}"));
        let names = Self::schema().fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
        let mut table: Vec<Vec<String>> = vec![names];
        for r in self.rows() {
            let mut cells = vec![r.key];
            cells.extend(r.values.map(f));
            cells.extend([r.status.to_string(), r.groups.map_or("-".into(), |n| n.to_string()), f(Some(r.mass))]);
            table.push(cells);
        }
        let widths: Vec<usize> =
            (0..table[0].len()).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
        let mut out = String::new();
        for (i, r) in table.iter().enumerate() {
            let cells: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
            if i == 0 {
                out.push_str(&format!(
                    "|{}|\n",
                    widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("|")
                ));
            }
        }
        out
    }
}

/// One output row before it becomes columns.
struct Row {
    key: String,
    values: [Option<f64>; 4],
    status: &'static str,
    groups: Option<i64>,
    mass: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_originals_use_a_floor_of_one() {
        let r = QueryReport {
            query: String::new(),
            groups: vec![GroupError::both("a", 0.0, 0.5), GroupError::both("b", 10.0, 8.0)],
            additive: true,
        };
        assert_eq!(r.groups[0].rel_error(), Some(0.5));
        assert_eq!(r.groups[1].rel_error(), Some(0.2));
        let s = r.summary();
        assert!((s.are().unwrap() - 0.35).abs() < 1e-12);
        assert_eq!(s.original.total_original, Some(10.0));
        assert_eq!((s.missing.groups, s.spurious.groups, s.union.groups), (0, 0, 2));
        assert_eq!(r.to_batch().unwrap().num_rows(), 2 + SUMMARY_ROWS.len());
    }

    /// An AVG group the estimate lacks has no estimate: counted as missing, outside every ARE.
    #[test]
    fn an_unanswered_average_is_counted_not_averaged() {
        let missing =
            GroupError { key: "m".into(), original: Some(4.0), estimate: None, presence: Presence::Missing, mass: 0.0 };
        let spurious = GroupError {
            key: "s".into(),
            original: None,
            estimate: Some(9.0),
            presence: Presence::Spurious,
            mass: 2.5,
        };
        let r = QueryReport {
            query: String::new(),
            groups: vec![GroupError::both("a", 2.0, 3.0), missing, spurious],
            additive: false,
        };
        let s = r.summary();
        assert_eq!((s.original.groups, s.are()), (2, Some(0.5)));
        assert_eq!((s.missing.groups, s.missing.are), (1, None));
        assert_eq!((s.spurious.groups, s.spurious.mass, s.spurious.are), (1, 2.5, None));
        assert_eq!((s.union.groups, s.union.are, s.union.total_original), (3, Some(0.5), None));
    }
}
