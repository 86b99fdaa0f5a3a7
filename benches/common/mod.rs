//! The NPS-like table (1,375,900 rows) as the DP benchmarks read it: a session that allows
//! seeded DP calls (their SQL rows are seeded, comparable runs: test fixtures), the table
//! loaded, its frequency table over the declared quasi-identifiers and `disease`, and that
//! table recoded onto the informative attribute's declared domain (the public table DP
//! releases run on).

use anonfusion::encode::{FrequencyTable, frequency_table};
use anonfusion::methods::ipa::domain::{informative_domain, public_table};
use datafusion::prelude::SessionContext;

pub struct Nps {
    pub rt: tokio::runtime::Runtime,
    pub ctx: SessionContext,
    /// The frequency table as read (the paper's mode runs on it), before the recoding.
    #[allow(dead_code)] // each bench is its own crate: the synth bench does not read it
    pub ft: FrequencyTable,
    pub public: FrequencyTable,
}

pub fn nps() -> Nps {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rt.block_on(async { ctx.sql("SET anonfusion.seeded_dp = true").await?.collect().await }).unwrap();
    rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('nps')").await?.collect().await }).unwrap();
    let meta = registry.require("nps").unwrap();
    let ft = rt.block_on(frequency_table(&ctx, "nps", &meta, Some("disease"))).unwrap();
    let domain = informative_domain("bench", "nps", &meta, "disease", None).unwrap();
    let public = public_table("bench", "nps", &ft, &domain).unwrap();
    Nps { rt, ctx, ft, public }
}
