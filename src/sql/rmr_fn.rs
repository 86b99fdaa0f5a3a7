//! `rmr(source, output, k, m, delta, epsilon [, options])`: RmR, the ArtUC paper's competitor in
//! Figs. 7–10 ((k,k^m)-anonymity with NCP ≤ δ and no utility constraints,
//! `src/methods/rmr`), as a baseline to compare `artuc` with. Options:
//! [`crate::methods::rmr::OPTIONS`].
//!
//! Registers the release (the same shape as artuc's, so `verify_release 'km=k:m'`,
//! `anon_metrics` and the workloads read it) as `output` and the report as `output_report`.

use super::args::Args;
use super::artuc_fn::{km_args, km_cells};
use super::glue::mem_table;
use super::method::{Call, MethodSpec, Outputs};
use super::report::Value::*;
use super::report::seeded;
use crate::error::{AnonError, Result};
use crate::methods::artuc::{RtTable, release};
use crate::methods::options::Options;
use crate::methods::rmr::{RmrConfig, rmr};

const F: &str = "rmr";

#[derive(Debug)]
pub(crate) struct Rmr;

impl MethodSpec for Rmr {
    type Params = RmrConfig;
    const NAME: &'static str = F;
    const SIGNATURE: &'static str = "rmr(source, output, k, m, delta, epsilon [, options])";
    const OPTIONS: Option<&'static Options> = Some(&crate::methods::rmr::OPTIONS);
    const ARITY: (usize, usize) = (6, 7);

    fn parse(&self, a: &Args) -> Result<RmrConfig> {
        let (k, m, delta, epsilon) = km_args(F, a, 2)?;
        if !(0.0..=1.0).contains(&delta) {
            return Err(AnonError::argument(
                F,
                "delta",
                format!("must be in [0, 1], got {}", crate::dp::ledger::shown(delta)),
            ));
        }
        RmrConfig::new(k, m, delta, epsilon).with_options(&a.opt_str(6, "options")?.unwrap_or_default())
    }

    fn deterministic(&self, p: &RmrConfig) -> bool {
        p.km.deterministic()
    }

    fn side_tables(&self, _: &RmrConfig) -> Vec<&'static str> {
        vec!["report"]
    }

    fn seed(&self, p: &RmrConfig) -> Option<u64> {
        p.km.seed
    }

    fn run(&self, call: &Call<'_>, p: &RmrConfig) -> Result<Outputs> {
        let batches = super::glue::in_order(call.ctx, call.source)?;
        let table = RtTable::from_batches(call.source, call.meta, &batches)?;
        let res = rmr(&table, p, call.registry.progress().as_ref())?;
        let published = release::release(&table, &res)?;
        let m = &res.measures;
        let mut cells = Vec::from(km_cells(&p.km, m));
        cells.extend([
            ("ul", Float(m.ul)),
            ("ul_gen", Float(m.ul_gen())),
            ("ul_sup", Float(m.ul_sup())),
            ("suppressed_codes", Int(m.suppressed_codes as i64)),
            // Codes outside the hierarchy, dropped before the method ran: counted, never named.
            ("unknown_codes", Int(table.codes.unknown.0 as i64)),
            // Whether the call was seeded, never the seed.
            seeded(p.km.seed),
        ]);
        Outputs::new(mem_table(published.schema.clone(), published.batches)?).with_timed_report(call, F, cells, None)
    }
}
