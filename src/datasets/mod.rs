//! Bundled datasets, each loadable in one statement with its data, hierarchies and roles:
//! UCI Adult (with the ARX hierarchies), a synthetic NPS-like patient table calibrated to the
//! published Q1–Q4 answers, and synthetic RT-datasets (demographics plus ICD-9-CM codes).
//!
//! Everything is compiled into the binary (`include_str!`) or generated, so the engine never
//! reads or downloads data at run time.

mod adult;
mod adult_uci;
pub mod nps;
pub mod rt;

pub use adult::{ADULT_QIS, adult};
pub(crate) use adult_uci::adult_uci;

use crate::error::Result;
use crate::meta::TableMeta;
use datafusion::arrow::record_batch::RecordBatch;

/// One table of a bundled dataset, ready to register.
#[derive(Debug, Clone)]
pub struct DatasetTable {
    /// Default table name (`adult`, `nps`, `ehrd`, `informs`).
    pub name: String,
    pub batches: Vec<RecordBatch>,
    pub meta: TableMeta,
}

impl DatasetTable {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// Keep the first `rows` records (the "number of instances" of the papers' experiments).
    /// A bundled file has the records it has: 0 rows or more than it holds is an error naming
    /// the argument, never an empty table or silently fewer rows than asked for.
    pub(crate) fn head(mut self, rows: Option<usize>) -> Result<Self> {
        let Some(mut left) = rows else { return Ok(self) };
        let size = self.num_rows();
        if left == 0 || left > size {
            return Err(crate::error::AnonError::argument(
                "load_dataset",
                "rows",
                format!(
                    "'{}' has {size} records: ask for 1 to {size} (or leave rows out for all), got {left}",
                    self.name
                ),
            ));
        }
        let mut kept = Vec::new();
        for b in self.batches {
            if left == 0 {
                break;
            }
            let n = b.num_rows().min(left);
            kept.push(b.slice(0, n));
            left -= n;
        }
        self.batches = kept;
        Ok(self)
    }
}

/// The datasets `load_dataset` knows, with their parameters, for help texts and errors.
pub(crate) const DATASETS: &[(&str, &str)] = &[
    ("adult", "UCI Adult, 30,162 rows (rows: the first that many), ARX hierarchies; occupation sensitive"),
    ("adult_uci", "adult plus UCI's relationship column; the entropy paper's 8 categorical quasi-identifiers"),
    ("nps", "synthetic NPS-like patients (rows default 1,375,900, seed); disease sensitive"),
    ("ehrd", "synthetic EHRD-like RT-dataset, 208,387 patients with ICD-9-CM codes (seed)"),
    ("informs", "synthetic Informs-like RT-dataset, 36,553 patients with ICD-9-CM codes (seed)"),
];

/// Load a bundled dataset by name. `rows` and `seed` apply to the generated ones.
pub fn load(name: &str, rows: Option<usize>, seed: Option<u64>) -> Result<DatasetTable> {
    let seed = seed.unwrap_or(nps::DEFAULT_SEED);
    match name.to_ascii_lowercase().as_str() {
        "adult" => adult()?.head(rows),
        "adult_uci" => adult_uci()?.head(rows),
        "nps" => nps::nps_like(rows.unwrap_or(nps::DEFAULT_ROWS), seed),
        "ehrd" => rt::rt_dataset(rt::RtPreset::Ehrd, rows, seed),
        "informs" => rt::rt_dataset(rt::RtPreset::Informs, rows, seed),
        other => {
            let known: Vec<&str> = DATASETS.iter().map(|d| d.0).collect();
            Err(crate::error::AnonError::argument(
                "load_dataset",
                "name",
                format!("unknown dataset '{other}'; known: {}", known.join(", ")),
            ))
        }
    }
}
