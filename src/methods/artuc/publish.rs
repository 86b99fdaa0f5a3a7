//! What an `artuc` call publishes, as one [`Release`]: the release, its report (the variant, the
//! constraints table, the parameters and what the result measures) and, for the any-time
//! variant, the `trajectory` of Algorithm 2's steps.

use super::{ArtucConfig, KmConfig, Measures, Source, Trajectory, Variant, call, release};
use crate::encode::source;
use crate::error::Result;
use crate::methods::contract::{Release, Rows, Side, Value, Value::*, seeded};
use crate::progress::Progress;
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

/// ArtUC on a read source under the utility constraints of `constraints`, both read in their
/// stored order (the result depends on the order of the records).
pub(crate) async fn artuc_release(
    source: &source::Source,
    constraints: &source::Source,
    config: &ArtucConfig,
    variant: Variant,
    progress: &dyn Progress,
) -> Result<Release> {
    let (batches, cons_batches) = (source.batches_in_order().await?, constraints.batches_in_order().await?);
    let input = Source { name: source.name(), meta: source.meta(), batches: &batches };
    let out = call(input, (constraints.name(), &cons_batches), config, variant, progress)?;
    let (table, res, trajectory, step) = (&out.table, &out.result, out.trajectory, out.step);
    let published = release::release(table, res)?;
    let (c, m) = (&config.km, &res.measures);
    let mut cells = vec![("variant", Text(variant.name().into())), ("constraints", Text(constraints.name().into()))];
    cells.extend(km_cells(c, m));
    cells.extend([
        ("ncp_sum", Float(m.ncp_sum)),
        ("ul", Float(m.ul)),
        ("ul_sum", Float(m.ul_sum)),
        ("ul_gen", Float(m.ul_gen())),
        ("ul_sup", Float(m.ul_sup())),
        ("suppressed_codes", Int(m.suppressed_codes as i64)),
        ("withheld_records", Int(m.withheld_records as i64)),
        ("withheld_codes", Int(m.withheld_codes as i64)),
        // Codes outside the hierarchy, dropped before the method ran
        // (load_hierarchy's unknown_codes=suppress): counted, never named.
        ("unknown_codes", Int(table.codes.unknown.0 as i64)),
        ("unknown_codes_distinct", Int(table.codes.unknown.1 as i64)),
        ("step", OptInt(step.map(|s| s as i64))),
        // Work done, like time_ms: the merge step's threads decide by their timing which
        // partners' runs are given up, so the count can differ by a few at one seed.
        ("gendiag_runs", Int(res.evaluations as i64)),
        // Whether the call was seeded, never the seed: a published seed would let anyone
        // replay the randomness (which records became counterfeits, which node was drawn).
        seeded(c.seed),
    ]);
    let release = Release::timed(Rows::Batches(published.schema, published.batches), cells, None);
    Ok(match trajectory {
        Some(t) => release.with("trajectory", trajectory_table(&t)?),
        None => release,
    })
}

/// The report cells ArtUC and RmR share: the parameters, then the release's size and NCP.
pub(crate) fn km_cells(c: &KmConfig, m: &Measures) -> [(&'static str, Value); 7] {
    [
        ("k", Int(c.k as i64)),
        ("m", Int(c.m as i64)),
        ("delta", Float(c.delta)),
        ("epsilon", Int(c.epsilon as i64)),
        ("records", Int(m.records as i64)),
        ("clusters", Int(m.clusters as i64)),
        ("ncp", Float(m.ncp)),
    ]
}

/// Algorithm 2's steps: `step`, `clusters`, `ncp`, `ul`, `suppressed_codes`.
fn trajectory_table(t: &Trajectory) -> Result<Side> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("step", DataType::Int64, false),
        Field::new("clusters", DataType::Int64, false),
        Field::new("ncp", DataType::Float64, false),
        Field::new("ul", DataType::Float64, false),
        Field::new("suppressed_codes", DataType::Int64, false),
    ]));
    let s = &t.steps;
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..s.len() as i64)),
        Arc::new(Int64Array::from_iter_values(s.iter().map(|x| x.clusters as i64))),
        Arc::new(Float64Array::from_iter_values(s.iter().map(|x| x.ncp))),
        Arc::new(Float64Array::from_iter_values(s.iter().map(|x| x.ul))),
        Arc::new(Int64Array::from_iter_values(s.iter().map(|x| x.suppressed_codes as i64))),
    ];
    Ok(Side::Memory(schema.clone(), vec![RecordBatch::try_new(schema, cols)?]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datasets::rt::{RtPreset, rt_dataset, utility_constraints};
    use crate::progress::Silent;

    /// The method reads a source and a constraints table built from batches, with no session:
    /// its release holds the records its report counts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_source_of_batches_gives_a_release_without_a_session() {
        let rt = rt_dataset(RtPreset::Informs, Some(4000), 1).unwrap();
        let source = source::Source::from_batches("informs", rt.batches[0].schema(), rt.batches, rt.meta).unwrap();
        let uc = utility_constraints(RtPreset::Informs, "UC1").unwrap();
        let constraints = source::Source::from_batches("uc1", uc.schema(), vec![uc], Default::default()).unwrap();
        let config = ArtucConfig::new(10, 2, 0.2, 200_000).with_seed(1);
        let release = artuc_release(&source, &constraints, &config, Variant::Artuc, &Silent).await.unwrap();
        let Rows::Batches(_, batches) = &release.rows else { panic!("ArtUC builds its release in the client") };
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert!(rows > 0);
        assert!(matches!(release.cell("records"), Some(Int(n)) if *n as usize == rows));
        assert!(matches!(release.cell("constraints"), Some(Text(c)) if c == "uc1"));
    }
}
