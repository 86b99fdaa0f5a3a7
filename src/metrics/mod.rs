//! Information-loss metrics of a release against its original: LM, DM, D(r), NCP, UL, RCE,
//! EMD, conditional-entropy loss, Q-block diversity, record counts and the two-way-marginal
//! score.
//!
//! Every metric is a pure function over a decoded release ([`decode::Decoded`]), the original's
//! frequency table and, for counterfeit methods, the catalog, so it is testable without SQL;
//! [`read::measure`] reads the tables for `anon_metrics(original, release [, catalog])` and
//! calls [`compute_all`]. Attribute roles and hierarchies always come from the ORIGINAL
//! table's declarations. docs/metrics.md gives every formula with its citation.

pub(crate) mod align;
pub mod catalog;
pub mod decode;
pub mod emd;
pub(crate) mod entropy;
mod flow;
pub mod loss;
pub(crate) mod marginals;
pub(crate) mod matching;
pub mod ncp;
pub mod rce;
pub(crate) mod read;
pub mod ul;

pub(crate) use crate::release::{CatalogRow, decode_catalog};
pub use decode::{Decoded, decode_release, decode_weighted};
pub use marginals::two_way_marginal;

use crate::encode::FrequencyTable;
use crate::error::Result;

/// One row of a metrics report.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub(crate) metric: String,
    pub(crate) value: f64,
    pub(crate) detail: String,
}

fn m(metric: &str, value: f64, detail: &str) -> Metric {
    Metric { metric: metric.to_string(), value, detail: detail.to_string() }
}

/// Everything the metrics read.
pub(crate) struct Inputs<'a> {
    release: &'a Decoded,
    /// The original's frequency table over its quasi-identifiers (and sensitive attribute);
    /// without it the alignment-based metrics (entropy loss) are left out.
    original: Option<&'a FrequencyTable>,
    original_name: &'a str,
    catalog: &'a [CatalogRow],
    catalog_name: &'a str,
    /// Per set-valued column of the release (same order): the original's records (demographic
    /// leaves and codes), for UL's suppression term.
    original_codes: &'a [ul::OriginalRecords],
    ncp_weights: Option<&'a [f64]>,
}

/// Every metric that applies, in a fixed order.
pub(crate) fn compute_all(inp: &Inputs) -> Result<Vec<Metric>> {
    let rel = inp.release;
    let weights = catalog::real_weights(rel, inp.catalog, inp.catalog_name)?;
    let mut out = counts(inp);
    out.push(m("lm", loss::lm(rel), "Loss Metric (Iyengar 2002), mean over records and QIs, in [0,1]"));
    out.push(m("dm", loss::dm(rel), "Discernibility Metric (Bayardo & Agrawal 2005): sum |E|^2 + |D| per suppressed"));
    out.push(m("mean_degree", loss::lm(rel), "mean D(r), h-ceiling paper Eqs. 1-3"));
    out.push(m("max_degree", loss::max_degree(rel), "max D(r), h-ceiling paper Eqs. 1-3 (the h the release meets)"));
    let (ncp, ncp_sum) = ncp::ncp(rel, inp.ncp_weights)?;
    out.push(m("ncp", ncp, "NCP(D) = sum NCP(r) / |D|, ArtUC Defs. 3-4"));
    out.push(m("ncp_sum", ncp_sum, "sum of NCP(r), ArtUC Def. 4 / Example 3"));
    out.push(m("ipa_ncp", ncp::ipa_ncp(rel), "NCP of the IPA paper (Eqs. 5-6): leaves covered, numeric too"));
    for (i, (col, original)) in rel.sets.iter().zip(inp.original_codes).enumerate() {
        out.extend(ul_metrics(&col.name, &ul::ul_bounds(rel, i, original)));
    }
    let rce_detail = if inp.catalog.is_empty() {
        "reconstruction error, h-ceiling paper Eq. 4: sum over records of (w - w^2 P), w = 1"
    } else {
        "reconstruction error, h-ceiling paper Eq. 4 and Fig. 4: sum (w - w^2 P), w from the catalog"
    };
    out.push(m("rce", rce::rce(rel, &weights), rce_detail));
    if rel.sensitive.is_some() {
        out.extend(sensitive_metrics(rel));
    }
    if let Some(ft) = inp.original {
        let al = align::align(ft, rel, inp.original_name)?;
        out.push(m(
            "entropy_loss",
            entropy::entropy_loss(&al),
            "sum over Q-blocks and QIs of each block's entropy, unweighted",
        ));
        out.push(m(
            "conditional_entropy",
            entropy::conditional_entropy(&al),
            "sum over QIs of H(X|Q) over all records: the entropy paper's total information loss (Eq. 6, Fig. 4)",
        ));
        out.push(m("unmatched_original_records", al.unmatched as f64, "original records no released record covers"));
    }
    Ok(out)
}

/// UL of one set-valued column: always its bounds and its exact generalization term; `ul` and
/// `ul_sum` themselves only when the release and the original determine them (docs/metrics.md).
fn ul_metrics(name: &str, b: &ul::UlBounds) -> Vec<Metric> {
    let (lo, hi) = b.ul();
    let (sum_lo, sum_hi) = b.sum();
    let mut out = Vec::new();
    if let Some(exact) = b.exact() {
        out.push(m(&format!("ul({name})"), exact, "UL(D) = sum UL(r) / |D|, ArtUC Defs. 5-6 (exact: the bounds meet)"));
        out.push(m(&format!("ul_sum({name})"), sum_lo, "sum of UL(r), ArtUC Def. 6"));
    }
    out.extend([
        m(&format!("ul_lo({name})"), lo, "lower bound on UL(D): suppressions the release and original force"),
        m(&format!("ul_hi({name})"), hi, "upper bound on UL(D): suppressions the release and original allow"),
        m(&format!("ul_sum_lo({name})"), sum_lo, "lower bound on sum of UL(r)"),
        m(&format!("ul_sum_hi({name})"), sum_hi, "upper bound on sum of UL(r)"),
        m(&format!("ul_gen({name})"), b.ul_gen(), "generalization term of UL(D), exact (ArtUC Fig. 15b's UL_gen)"),
        m(&format!("suppressed_codes_lo({name})"), b.suppressed.0 as f64, "lower bound on codes suppressed"),
        m(&format!("suppressed_codes_hi({name})"), b.suppressed.1 as f64, "upper bound on codes suppressed"),
    ]);
    out
}

fn sensitive_metrics(rel: &Decoded) -> Vec<Metric> {
    let (emax, emean) = emd::emd_summary(rel);
    let kind = if rel.sensitive.as_ref().is_some_and(|s| s.ordered) { "ordered" } else { "equal" };
    let [l1, l2, l3] = entropy::qblock_diversity(rel);
    vec![
        m("emd_max", emax, &format!("max EMD class vs table, {kind} distance (t-closeness, Li et al. 2007)")),
        m("emd_mean", emean, &format!("mean EMD over classes, {kind} distance")),
        m("q_blocks", rel.class_sizes.len() as f64, "equivalence classes (Q-blocks)"),
        m("q_blocks_l1", l1 as f64, "Q-blocks with 1 distinct sensitive value (entropy paper Fig. 5)"),
        m("q_blocks_l2", l2 as f64, "Q-blocks with 2 distinct sensitive values"),
        m("q_blocks_l3plus", l3 as f64, "Q-blocks with 3 or more distinct sensitive values"),
    ]
}

fn counts(inp: &Inputs) -> Vec<Metric> {
    let rel = inp.release;
    let fake = crate::release::catalog::counterfeits(inp.catalog);
    let mut out = Vec::new();
    if let Some(ft) = inp.original {
        out.push(m("original_records", ft.total() as f64, "records of the original table"));
    }
    out.extend([
        m("released_records", rel.records() as f64, "rows of the release"),
        m("real_records", rel.records().saturating_sub(fake) as f64, "released rows minus counterfeits per catalog"),
        m("counterfeit_records", fake as f64, "sum of the catalog's counts"),
        m("suppressed_records", rel.suppressed_count() as f64, "released rows with every QI '*' and NULL bounds"),
    ]);
    out
}
