//! `dp_synthesize(source, output, epsilon [, options])`: ε-differentially private synthetic
//! records from a tree of noisy marginals (src/methods/synth; proof: docs/dp.md, "Synthetic
//! records from a tree of marginals"). This file reads and encodes the declared table, states
//! the charge, and names the tables' cells; the method itself sees only codes and domain sizes.
//!
//! - `output`: the records, one per synthetic record, each quasi-identifier as its node at the
//!   call's level (`age` as `10-14` with `age_lo`/`age_hi`, or the value itself at level 0) and
//!   the informative attribute as a value of its declared domain; the schema metadata says
//!   what the release is;
//! - `output_report`: the guarantee, ε and its four parts, the levels, the split, the tree and
//!   the three-way marginals, the number of records (all computed from the release and its public parameters);
//! - with `diagnostics=true` only: `output_diagnostics` (first column `not_for_publication`).
//!
//! Options: [`OPTIONS`]; `levels=` defaults to each quasi-identifier's finest level with at
//! most [`DEFAULT_MAX_BINS`] nodes, a numeric one's no finer than its first band
//! ([`default_level`]); `max_rows=` bounds the rows noise may add ([`synth::check_rows`]).

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use super::report::{NOT_FOR_PUBLICATION, Value::*};
use crate::dp::ledger::{Charge, epsilon_units};
use crate::encode::publish::Source;
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::lattice::format_levels;
use crate::meta::TableMeta;
use crate::methods::contract::{Release, Rows, Side};
use crate::methods::ipa::Guarantee;
use crate::methods::ipa::domain::{check_declared, informative_domain, public_table};
use crate::methods::ipa::guarantee::NOT_DP;
use crate::methods::ipa::release::{Cells, cells_release, labelled};
use crate::methods::options::{DIAGNOSTICS, Kind, Options, SEED, opt};
use crate::methods::synth::{self, Encoded, SynthConfig, Synthesis};
use crate::session::runtime::block_on_cancellable;
use std::collections::HashMap;

const F: &str = "dp_synthesize";

/// `dp_synthesize`'s options.
const OPTIONS: Options = Options {
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

/// `dp_synthesize(source, output, epsilon [, options])`.
#[derive(Debug)]
pub(crate) struct Synthesize;

/// A call's options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SynthOptions {
    config: SynthConfig,
    levels: Option<Vec<u8>>,
    values: Option<Vec<String>>,
    /// `edges=a-b|c-d`: tree edges declared by name, resolved against the declared attributes.
    edges: Vec<String>,
    diagnostics: bool,
    /// `max_rows=`: the most rows the record count's noise may add ([`synth::check_rows`]).
    max_rows: u64,
}

impl SynthOptions {
    fn parse(epsilon: f64, text: &str) -> Result<Self> {
        let mut o = SynthOptions {
            config: SynthConfig::new(epsilon),
            levels: None,
            values: None,
            edges: Vec::new(),
            diagnostics: false,
            max_rows: synth::DEFAULT_MAX_ROWS,
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
        synth::Budget::new(epsilon, o.config.split, 1)?;
        Ok(o)
    }

    fn seeded(&self) -> bool {
        self.config.seed.is_some()
    }

    /// The sentence in the report, the ledger's guarantee and the release's metadata.
    fn statement(&self) -> String {
        let s = Guarantee::Pure.statement();
        if self.seeded() { format!("{NOT_DP}: seeded call (tests only), otherwise {s}") } else { s }
    }
}

/// The public domain of a call: the quasi-identifiers' declared hierarchies (none derived from
/// the data) and levels, the informative attribute's declared values, and every attribute's
/// domain size (quasi-identifiers in declaration order, then the informative attribute).
struct Domains<'m> {
    qis: Vec<&'m str>,
    levels: Vec<u8>,
    /// `edges=` as attribute indices (quasi-identifiers, then the informative attribute).
    declared: Vec<(usize, usize)>,
    informative: Vec<String>,
    sizes: Vec<usize>,
}

impl<'m> Domains<'m> {
    fn resolve(table: &str, meta: &'m TableMeta, o: &SynthOptions) -> Result<Self> {
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
        synth::check_declared(names.len(), &declared)?;
        Ok(Domains { qis, levels, declared, informative, sizes })
    }

    /// The source's frequency table encoded at the call's levels (quasi-identifiers in
    /// declaration order, then the informative attribute's code in its declared domain).
    fn encode(&self, table: &str, src: &Source<'_>) -> Result<(Encoded, crate::encode::FrequencyTable)> {
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
fn charge(o: &SynthOptions, budget: &synth::Budget) -> (Charge, String) {
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

impl MethodSpec for Synthesize {
    /// (epsilon, options).
    type Params = (f64, SynthOptions);
    const NAME: &'static str = F;
    const SIGNATURE: &'static str = "dp_synthesize(source, output, epsilon [, options])";
    const OPTIONS: Option<&'static Options> = Some(&OPTIONS);
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<Self::Params> {
        let epsilon = a.f64(2, "epsilon")?;
        epsilon_units(F, epsilon)?;
        let options = SynthOptions::parse(epsilon, &a.opt_str(3, "options")?.unwrap_or_default())?;
        Ok((epsilon, options))
    }

    fn deterministic(&self, (_, o): &Self::Params) -> bool {
        o.seeded()
    }

    fn side_tables(&self, _: &Self::Params) -> Vec<&'static str> {
        vec!["report", "diagnostics"]
    }

    /// Public quantities only: the declared domains, the size of the marginals, the budget.
    fn charge(&self, (epsilon, o): &Self::Params, source: &str, meta: &TableMeta) -> Result<Option<(Charge, String)>> {
        let d = Domains::resolve(source, meta, o)?;
        Encoded::check_size(&d.sizes)?;
        let budget =
            synth::Budget::with_declared(*epsilon, o.config.split, d.sizes.len(), d.declared.len(), o.config.triples)?;
        synth::check_rows(&d.sizes, &budget, o.max_rows)?;
        Ok(Some(charge(o, &budget)))
    }

    fn seed(&self, (_, o): &Self::Params) -> Option<u64> {
        o.config.seed
    }

    fn run(&self, c: &Call<'_>, (_, o): &Self::Params) -> Result<Outputs> {
        let d = Domains::resolve(c.source, c.meta, o)?;
        let (source, progress) = (c.read()?, c.registry.progress());
        let (res, ft, src_schema, dropped) = block_on_cancellable(progress.as_ref(), async {
            let src = Source::of(&source).await?;
            let (data, ft) = d.encode(c.source, &src)?;
            c.reserve_budget()?;
            let config = SynthConfig { declared: d.declared.clone(), ..o.config.clone() };
            let res = synth::synthesize(&data, &config, progress.as_ref())?;
            Ok((res, ft, src.schema.clone(), src.dropped_columns()))
        })?;
        let original = ft.total();
        let cells = SynthCells::new(&res, &d.levels);
        let (schema, batches) = cells_release(&ft, &src_schema, &cells)?;
        let (schema, batches) = labelled(schema, batches, Guarantee::Pure, o.statement(), res.budget.total())?;
        let rows = Rows::Batches(schema, batches);
        let names: Vec<&str> = d.qis.iter().copied().chain([c.meta.sensitive(c.source)?]).collect();
        let tree: Vec<String> = res.tree.iter().map(|&(a, b)| format!("{}-{}", names[a], names[b])).collect();
        let [one, sel, two, three] = res.budget.totals();
        let triples: Vec<String> =
            res.triples.iter().map(|&(p, e, c)| format!("{}-{}-{}", names[e], names[p], names[c])).collect();
        let split = o.config.split.map(|f| f.to_string()).join(":");
        let cells = vec![
            ("guarantee", Text(o.statement())),
            ("epsilon", Float(res.budget.total())),
            ("epsilon_one_way", Float(one)),
            ("epsilon_selection", Float(sel)),
            ("epsilon_two_way", Float(two)),
            ("epsilon_three_way", Float(three)),
            ("delta", Float(0.0)),
            ("levels", Text(d.levels.iter().map(u8::to_string).collect::<Vec<_>>().join(":"))),
            ("split", Text(split)),
            ("tree", Text(tree.join(", "))),
            ("three_way", Text(triples.join(", "))),
            ("released_records", Int(res.records as i64)),
            ("dropped_columns", OptText(crate::release::dropped_list(&dropped))),
        ];
        let release = Release::untimed(rows, cells);
        if !o.diagnostics {
            return c.publish(F, release);
        }
        let diagnostics = vec![
            ("not_for_publication", Text(NOT_FOR_PUBLICATION.into())),
            ("original_records", Int(original as i64)),
            ("released_records", Int(res.records as i64)),
            ("time_ms", Float(c.elapsed_ms())),
        ];
        c.publish(F, release.with("diagnostics", Side::Row(diagnostics)))
    }
}

/// The synthetic records as released cells: one class per distinct combination of the
/// quasi-identifiers' nodes, its records counted per informative value.
struct SynthCells {
    levels: Vec<u8>,
    classes: Vec<Vec<u32>>,
    cells: Vec<(u32, u32, u64)>,
}

impl SynthCells {
    fn new(res: &Synthesis, levels: &[u8]) -> Self {
        let k = res.columns.len();
        let n = res.records as usize;
        let (mut ids, mut classes) = (HashMap::<Vec<u32>, u32>::new(), Vec::new());
        let mut counts = HashMap::<(u32, u32), u64>::new();
        for i in 0..n {
            let key: Vec<u32> = res.columns[..k - 1].iter().map(|c| c[i]).collect();
            let id = *ids.entry(key).or_insert_with_key(|key| {
                classes.push(key.clone());
                classes.len() as u32 - 1
            });
            *counts.entry((id, res.columns[k - 1][i])).or_default() += 1;
        }
        let mut cells: Vec<(u32, u32, u64)> = counts.into_iter().map(|((c, v), n)| (c, v, n)).collect();
        cells.sort_unstable();
        SynthCells { levels: levels.to_vec(), classes, cells }
    }
}

impl Cells for SynthCells {
    fn classes(&self) -> Vec<Option<(&[u8], Vec<u32>)>> {
        self.classes.iter().map(|c| Some((&self.levels[..], c.clone()))).collect()
    }
    fn cells(&self) -> impl Iterator<Item = (u32, u32, u64)> {
        self.cells.iter().copied()
    }
}
