//! `dp_synthesize`'s call: its options (declared once, [`OPTIONS`]), the public domains of a
//! declared table (hierarchies, levels, the informative attribute's declared values, tree
//! edges the call declares) and the ledger's charge, all from public quantities before anything
//! is read; [`super::publish`] runs the method on a read source.
//!
//! `levels=` defaults to each quasi-identifier's finest level with at most
//! [`DEFAULT_MAX_BINS`] nodes, a numeric one's no finer than its first band
//! ([`default_level`]); `max_rows=` bounds the rows noise may add ([`super::check_rows`]).

use super::{Budget, Encoded, SynthConfig};
use crate::dp::ledger::Charge;
use crate::encode::publish::Source as PublicSource;
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::lattice::format_levels;
use crate::meta::TableMeta;
use crate::methods::ipa::Guarantee;
use crate::methods::ipa::domain::{check_declared, informative_domain, public_table};
use crate::methods::ipa::guarantee::NOT_DP;
use crate::methods::options::{DIAGNOSTICS, Kind, Options, SEED, opt};

const F: &str = "dp_synthesize";

/// `dp_synthesize`'s options.
pub(crate) const OPTIONS: Options = Options {
    function: F,
    specs: &[
        opt(
            "levels",
            Kind::Text("1:0:1:2:0"),
            "each one's finest level with at most 100 nodes",
            "the quasi-identifiers' hierarchy levels, in declaration order",
        ),
        // The same declared domain as ipa_release's (one spec, one doc).
        crate::methods::ipa::call::VALUES,
        opt(
            "edges",
            Kind::Text("a-b|c-d"),
            "",
            "tree edges the call declares (public: they spend no selection budget)",
        ),
        opt(
            "triples",
            Kind::Int { min: 0, max: u64::MAX },
            "1",
            "three-way marginals chosen beside the tree, AIM's way (0: the tree alone)",
        ),
        opt(
            "split",
            Kind::Text("0.1:0.1:0.8"),
            "0.1:0.1:0.8",
            "epsilon's fractions: one-way marginals, selection, two- and three-way marginals",
        ),
        opt(
            "max_rows",
            Kind::Int { min: 1, max: u64::MAX },
            "20000000",
            "the most rows noise may add to the record count",
        ),
        DIAGNOSTICS,
        SEED,
    ],
};

/// The default level of a quasi-identifier: its finest with at most this many nodes, so every
/// two-way marginal has at most 10^4 cells times the informative domain's size.
pub(crate) const DEFAULT_MAX_BINS: usize = 100;

/// A call's options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SynthOptions {
    pub(crate) config: SynthConfig,
    levels: Option<Vec<u8>>,
    values: Option<Vec<String>>,
    /// `edges=a-b|c-d`: tree edges declared by name, resolved against the declared attributes.
    edges: Vec<String>,
    pub(crate) diagnostics: bool,
    /// `max_rows=`: the most rows the record count's noise may add ([`synth::check_rows`]).
    max_rows: u64,
}

impl SynthOptions {
    pub(crate) fn parse(epsilon: f64, text: &str) -> Result<Self> {
        let mut o = SynthOptions {
            config: SynthConfig::new(epsilon),
            levels: None,
            values: None,
            edges: Vec::new(),
            diagnostics: false,
            max_rows: super::DEFAULT_MAX_ROWS,
        };
        let given = OPTIONS.parse(text)?;
        o.config.seed = given.seed();
        o.diagnostics = given.flag("diagnostics").unwrap_or(false);
        o.max_rows = given.int("max_rows").unwrap_or(o.max_rows);
        if let Some(triples) = given.int("triples") {
            o.config.triples = triples as usize;
        }
        o.values = given.list("values");
        if let Some(edges) = given.text("edges") {
            o.edges = edges.split('|').map(|e| e.trim().to_string()).collect();
        }
        if let Some(value) = given.text("levels") {
            let levels = value.split(':').map(|l| l.trim().parse::<u8>().ok()).collect::<Option<Vec<u8>>>();
            o.levels = Some(
                levels.ok_or_else(|| AnonError::argument(F, "levels", "must be a list of levels such as 1:0:1:2:0"))?,
            );
        }
        if let Some(value) = given.text("split") {
            let parts = value.split(':').map(|p| p.trim().parse::<f64>().ok()).collect::<Option<Vec<f64>>>();
            o.config.split = parts
                .and_then(|p| p.try_into().ok())
                .ok_or_else(|| AnonError::argument(F, "split", "must be three fractions such as 0.1:0.1:0.8"))?;
        }
        // The split's own checks, with an attribute count that cannot fail otherwise.
        Budget::new(epsilon, o.config.split, 1)?;
        Ok(o)
    }

    pub(crate) fn seed(&self) -> Option<u64> {
        self.config.seed
    }

    fn seeded(&self) -> bool {
        self.config.seed.is_some()
    }

    /// The ledger's charge, from public quantities only: the declared domains, the size of the
    /// marginals, the budget.
    pub(crate) fn charge(&self, epsilon: f64, table: &str, meta: &TableMeta) -> Result<(Charge, String)> {
        let d = Domains::resolve(table, meta, self)?;
        Encoded::check_size(&d.sizes)?;
        let budget =
            Budget::with_declared(epsilon, self.config.split, d.sizes.len(), d.declared.len(), self.config.triples)?;
        super::check_rows(&d.sizes, &budget, self.max_rows)?;
        Ok(charge(self, &budget))
    }

    /// The sentence in the report, the ledger's guarantee and the release's metadata.
    pub(crate) fn statement(&self) -> String {
        let s = Guarantee::Pure.statement();
        if self.seeded() { format!("{NOT_DP}: seeded call (tests only), otherwise {s}") } else { s }
    }
}

/// The public domain of a call: the quasi-identifiers' declared hierarchies (none derived from
/// the data) and levels, the informative attribute's declared values, and every attribute's
/// domain size (quasi-identifiers in declaration order, then the informative attribute).
pub(crate) struct Domains<'m> {
    pub(crate) qis: Vec<&'m str>,
    pub(crate) levels: Vec<u8>,
    /// `edges=` as attribute indices (quasi-identifiers, then the informative attribute).
    pub(crate) declared: Vec<(usize, usize)>,
    pub(crate) informative: Vec<String>,
    pub(crate) sizes: Vec<usize>,
}

impl<'m> Domains<'m> {
    pub(crate) fn resolve(table: &str, meta: &'m TableMeta, o: &SynthOptions) -> Result<Self> {
        let sensitive = meta.sensitive(table)?;
        let informative = informative_domain(F, table, meta, sensitive, o.values.as_deref())?;
        let qis = meta.quasi_identifiers();
        let hierarchies =
            qis.iter().map(|q| meta.hierarchy(table, q).map(|h| h.as_ref())).collect::<Result<Vec<_>>>()?;
        check_declared(F, qis.iter().copied().zip(hierarchies.iter().copied()))?;
        let levels = match &o.levels {
            Some(l) => {
                let heights: Vec<u8> = hierarchies.iter().map(|h| h.height() as u8).collect();
                if l.len() != heights.len() || l.iter().zip(&heights).any(|(a, h)| a > h) {
                    return Err(AnonError::argument(
                        F,
                        "levels",
                        format!(
                            "'{}' is not one level per quasi-identifier ({}) within their heights {}",
                            format_levels(l),
                            qis.join(", "),
                            format_levels(&heights)
                        ),
                    ));
                }
                l.clone()
            }
            None => hierarchies.iter().map(|h| default_level(h)).collect(),
        };
        let mut sizes: Vec<usize> = hierarchies.iter().zip(&levels).map(|(h, &l)| h.width(l as usize)).collect();
        sizes.push(informative.len());
        let names: Vec<&str> = qis.iter().copied().chain([sensitive]).collect();
        let declared = o.edges.iter().map(|e| declared_edge(e, &names)).collect::<Result<Vec<_>>>()?;
        super::check_declared(names.len(), &declared)?;
        Ok(Domains { qis, levels, declared, informative, sizes })
    }

    /// The source's frequency table encoded at the call's levels (quasi-identifiers in
    /// declaration order, then the informative attribute's code in its declared domain).
    pub(crate) fn encode(
        &self,
        table: &str,
        src: &PublicSource<'_>,
    ) -> Result<(Encoded, crate::encode::FrequencyTable)> {
        let ft = public_table(F, table, &src.ft, &self.informative)?;
        // The frequency table's columns are the declared quasi-identifiers in declaration order.
        if !ft.qis.iter().map(|q| q.name.as_str()).eq(self.qis.iter().copied()) {
            return Err(AnonError::table(table, "internal: the frequency table's columns are not the declared ones"));
        }
        Ok((Encoded::from_table(&ft, &self.levels)?, ft))
    }
}

/// One `edges=` entry, `a-b`, as the two attributes' indices in `names` (a name may itself
/// hold '-': every split point is tried).
fn declared_edge(edge: &str, names: &[&str]) -> Result<(usize, usize)> {
    let index = |n: &str| names.iter().position(|&m| m == n.trim());
    edge.match_indices('-').find_map(|(i, _)| Some((index(&edge[..i])?, index(&edge[i + 1..])?))).ok_or_else(|| {
        AnonError::argument(
            F,
            "edges",
            format!("'{edge}' is not two declared attributes joined by '-' ({})", names.join(", ")),
        )
    })
}

/// A hierarchy's finest level with at most [`DEFAULT_MAX_BINS`] nodes, no finer than its
/// [`Hierarchy::finest_band`]: measured at raw numbers, every two-way marginal would spread the
/// same records over as many more cells, each with its own noise. `levels=0:…` still asks for
/// the leaves.
fn default_level(h: &Hierarchy) -> u8 {
    (h.finest_band()..=h.height()).find(|&l| h.width(l) <= DEFAULT_MAX_BINS).unwrap_or(h.height()) as u8
}

/// The ledger's charge: the proof's composition sum on the samplers' grid.
fn charge(o: &SynthOptions, budget: &Budget) -> (Charge, String) {
    let [one, sel, two, three] = budget.totals();
    let mut parts = format!(
        "guarantee=pure, one_way={one} ({} x {}), selection={sel} ({} x {}), two_way={two} ({} x {}), \
         three_way={three} ({} x {})",
        budget.k,
        budget.one_way,
        budget.rounds,
        budget.selection,
        budget.k - 1,
        budget.two_way,
        budget.triples,
        budget.two_way
    );
    if o.seeded() {
        parts.push_str(", seeded (not private)");
    }
    (Charge::epsilon(budget.units()).seeded(o.seeded()), parts)
}
