//! ipa_release (issue targets, release build, 2-core machine): the NPS-like table at 1,375,900
//! rows, epsilon = 1, under 15 s. Rows: the table's declared default, the adaptive partition
//! (`adaptive_declared_plan`: the partition chosen from noisy counts, the coarse level and the
//! cells drawn, made consistent); the node release (`pure_node_whole_lattice`: every lattice
//! node scored from the exact frequency table, the node chosen by the exponential mechanism,
//! its histogram drawn) and `approx`, on the frequency table; the whole SQL calls (aggregation
//! of the rows, the above, the tables), default and `partition=node`; the paper's mode for
//! comparison. Peak memory (< 2 GB) is measured on the CLI with `/usr/bin/time -v`
//! (docs/results/ipa.md), not here.
//!
//! Run: `cargo bench --bench ipa`

mod common;

use anonfusion::methods::ipa::adaptive::{self, AdaptiveConfig};
use anonfusion::methods::ipa::sound::{DpConfig, release};
use anonfusion::methods::ipa::{Guarantee, IpaConfig, search};
use anonfusion::progress::Silent;
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

fn nps(c: &mut Criterion) {
    let common::Nps { rt, ctx, ft, public } = common::nps();
    let mut g = c.benchmark_group("ipa_nps_1375900_eps1");
    g.sample_size(10).measurement_time(Duration::from_secs(40));
    for (name, guarantee) in [
        ("pure_node_whole_lattice", anonfusion::methods::ipa::call::DEFAULT_GUARANTEE),
        ("approx_whole_lattice", Guarantee::Approx { delta: anonfusion::methods::ipa::guarantee::DEFAULT_DELTA }),
    ] {
        let mut config = DpConfig::new(1.0, guarantee);
        config.seed = Some(1);
        g.bench_function(name, |b| b.iter(|| release(&public, &config, &Silent).unwrap().histogram.released_records));
    }
    let adaptive_config =
        AdaptiveConfig::from_options(1.0, anonfusion::datasets::nps::RELEASE_PLAN).unwrap().with_seed(1);
    g.bench_function("adaptive_declared_plan", |b| {
        b.iter(|| adaptive::release(&public, &adaptive_config).unwrap().released_records)
    });
    for (name, options) in [("sql_call", "seed=1"), ("sql_call_node", "partition=node, seed=1")] {
        g.bench_function(name, |b| {
            b.iter(|| {
                // Dropping the output defeats the memo: every call aggregates, chooses, draws and builds.
                ctx.deregister_table("nps_ipa").unwrap();
                let sql = format!("SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0, '{options}')");
                rt.block_on(async { ctx.sql(&sql).await?.collect().await }).unwrap()
            })
        });
    }
    let paper = IpaConfig::new(1.0).with_seed(1);
    g.bench_function("paper_whole_lattice", |b| b.iter(|| search(&ft, &paper, &Silent).unwrap().il()));
    g.finish();
}

criterion_group!(benches, nps);
criterion_main!(benches);
