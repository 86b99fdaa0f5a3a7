//! `rmr(source, output, k, m, delta, epsilon [, options])`: RmR, the ArtUC paper's competitor in
//! Figs. 7–10 ((k,k^m)-anonymity with NCP ≤ δ and no utility constraints,
//! `src/methods/rmr`), as a baseline to compare `artuc` with. Options: `seed=42,
//! pick=random|first, weights=w1:w2`.
//!
//! Registers the release (the same shape as artuc's, so `verify_release 'km=k:m'`,
//! `anon_metrics` and the workloads read it) as `output` and the report as `output_report`.

use super::method::{Call, MethodSpec, Outputs};
use super::report::Value::*;
use super::{Args, mem_table};
use crate::error::{AnonError, Result};
use crate::methods::artuc::{Pick, RtTable, release};
use crate::methods::rmr::{RmrConfig, rmr};

const F: &str = "rmr";

#[derive(Debug)]
pub(crate) struct Rmr;

impl MethodSpec for Rmr {
    type Params = RmrConfig;
    const NAME: &'static str = F;
    const SIGNATURE: &'static str =
        "rmr(source, output, k, m, delta, epsilon [, 'seed=42, pick=random|first, weights=w1:w2'])";
    const ARITY: (usize, usize) = (6, 7);

    fn parse(&self, a: &Args) -> Result<RmrConfig> {
        let (k, m, delta, epsilon) = (a.i64(2, "k")?, a.i64(3, "m")?, a.f64(4, "delta")?, a.i64(5, "epsilon")?);
        for (name, v) in [("k", k), ("m", m), ("epsilon", epsilon)] {
            if v < 0 {
                return Err(AnonError::argument(F, name, format!("must not be negative, got {v}")));
            }
        }
        if !(0.0..=1.0).contains(&delta) {
            return Err(AnonError::argument(F, "delta", format!("must be in [0, 1], got {delta}")));
        }
        RmrConfig::new(k as u64, m as u64, delta, epsilon as u64)
            .with_options(&a.opt_str(6, "options")?.unwrap_or_default())
    }

    /// Random record picks without a seed differ from call to call.
    fn deterministic(&self, p: &RmrConfig) -> bool {
        p.seed.is_some() || p.pick == Pick::First
    }

    fn side_tables(&self, _: &RmrConfig) -> Vec<&'static str> {
        vec!["report"]
    }

    fn seed(&self, p: &RmrConfig) -> Option<u64> {
        p.seed
    }

    fn run(&self, call: &Call<'_>, p: &RmrConfig) -> Result<Outputs> {
        let batches = super::in_order(call.ctx, call.source)?;
        let table = RtTable::from_batches(call.source, call.meta, &batches)?;
        let res = rmr(&table, p, call.registry.progress().as_ref())?;
        let published = release::release(&table, &res)?;
        let m = &res.measures;
        Outputs::new(mem_table(published.schema.clone(), published.batches)?).with_report(
            call,
            F,
            vec![
                ("k", Int(p.k as i64)),
                ("m", Int(p.m as i64)),
                ("delta", Float(p.delta)),
                ("epsilon", Int(p.epsilon as i64)),
                ("records", Int(m.records as i64)),
                ("clusters", Int(m.clusters as i64)),
                ("ncp", Float(m.ncp)),
                ("ul", Float(m.ul)),
                ("ul_gen", Float(m.ul_gen())),
                ("ul_sup", Float(m.ul_sup())),
                ("suppressed_codes", Int(m.suppressed_codes as i64)),
                // Codes outside the hierarchy, dropped before the method ran: counted, never named.
                ("unknown_codes", Int(table.codes.unknown.0 as i64)),
                // Whether the call was seeded, never the seed.
                ("seeded", Bool(p.seed.is_some())),
                ("time_ms", Float(call.elapsed_ms())),
            ],
        )
    }
}
