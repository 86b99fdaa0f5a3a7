//! What a `dp_synthesize` call publishes, as one [`Release`]:
//!
//! - the records, one per synthetic record, each quasi-identifier as its node at the call's
//!   level (`age` as `10-14` with `age_lo`/`age_hi`, or the value itself at level 0) and the
//!   informative attribute as a value of its declared domain, labelled with the guarantee;
//! - `report`: the guarantee, ε and its four parts, the levels, the split, the tree and the
//!   three-way marginals, the number of records (all computed from the release and its public
//!   parameters);
//! - with `diagnostics=true` only: `diagnostics` (first column `not_for_publication`).

use super::call::{Domains, SynthOptions};
use super::{SynthConfig, Synthesis};
use crate::encode::publish::Source as PublicSource;
use crate::encode::source::Source;
use crate::error::Result;
use crate::methods::PassTimes;
use crate::methods::contract::{NOT_FOR_PUBLICATION, Release, Rows, Side, Value::*};
use crate::methods::ipa::Guarantee;
use crate::methods::ipa::call::BeforeNoise;
use crate::methods::ipa::domain::written_domain;
use crate::methods::ipa::release::{Cells, cells_release, labelled_cells};
use crate::progress::Progress;
use std::collections::HashMap;
use std::time::Instant;

/// `dp_synthesize` on a read source: its declared domains, the frequency table encoded at the
/// call's levels, the budget reserved (`before_noise`) before the first draw, the synthesis and
/// its tables.
pub(crate) async fn synth_release(
    source: &Source,
    o: &SynthOptions,
    progress: &dyn Progress,
    before_noise: BeforeNoise<'_>,
) -> Result<Release> {
    let start = Instant::now();
    let (table, meta) = (source.name(), source.meta());
    let mut d = Domains::resolve(table, meta, o)?;
    d.informative = written_domain(table, meta.sensitive(table)?, &source.schema(), &d.informative)?;
    let src = PublicSource::of(source).await?;
    let (data, ft) = d.encode(table, &src)?;
    before_noise()?;
    let config = SynthConfig { declared: d.declared.clone(), ..o.config.clone() };
    let res = super::synthesize(&data, &config, progress)?;
    let original = ft.total();
    let cells = SynthCells::new(&res, &d.levels);
    let cells = cells_release(&ft, &src.schema, &cells, src.dropped_columns())?;
    let cells = labelled_cells(cells, Guarantee::Pure, o.statement(), res.budget.total());
    let names: Vec<&str> = d.qis.iter().copied().chain([meta.sensitive(table)?]).collect();
    let tree: Vec<String> = res.tree.iter().map(|&(a, b)| format!("{}-{}", names[a], names[b])).collect();
    let [one, sel, two, three] = res.budget.totals();
    let triples: Vec<String> =
        res.triples.iter().map(|&(p, e, c)| format!("{}-{}-{}", names[e], names[p], names[c])).collect();
    let split = o.config.split.map(|f| f.to_string()).join(":");
    let report = vec![
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
        ("dropped_columns", OptText(crate::release::dropped_list(&cells.dropped))),
    ];
    let release = Release::untimed(Rows::Classes(cells), report);
    if !o.diagnostics {
        return Ok(release);
    }
    let diagnostics = vec![
        ("not_for_publication", Text(NOT_FOR_PUBLICATION.into())),
        ("original_records", Int(original as i64)),
        ("released_records", Int(res.records as i64)),
        ("time_ms", Float(PassTimes::since(start))),
    ];
    Ok(release.with("diagnostics", Side::Row(diagnostics)))
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
