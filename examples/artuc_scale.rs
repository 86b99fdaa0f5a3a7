//! Time ArtUC on a synthetic RT-dataset: `cargo run --release --example artuc_scale -- ehrd
//! [rows] [UC1] [k] [m] [delta]`. Prints each phase's time (from the progress callbacks) and
//! the release's measures; epsilon is unbounded so the suppression count is reported, not
//! enforced. It runs [`call`], the entry point of the SQL function, with the SQL call's options
//! (`'seed=7'`), so its release is the one `artuc(..., 'seed=7')` publishes on the same table.
//! A 7th argument `sql` then makes the same call through SQL in this process (as
//! `anonfusion -c` runs it) and prints its report, so both times come from one run.

use anonfusion::datasets;
use anonfusion::datasets::rt::{RtPreset, utility_constraints};
use anonfusion::methods::artuc::{ArtucConfig, Source, Variant, call};
use anonfusion::progress::Progress;
use datafusion::arrow::util::pretty::pretty_format_batches;
use std::error::Error;
use std::sync::Mutex;
use std::time::Instant;

/// Prints every task's wall time when it finishes.
#[derive(Debug)]
struct Phases(Mutex<Option<(String, Instant)>>);

impl Progress for Phases {
    fn begin(&self, task: &str, _total: u64) {
        *self.0.lock().unwrap() = Some((task.to_string(), Instant::now()));
    }
    fn advance(&self, _n: u64) {}
    fn finish(&self) {
        if let Some((task, t)) = self.0.lock().unwrap().take() {
            eprintln!("  {task}: {:.2} s", t.elapsed().as_secs_f64());
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let name = arg(0, "ehrd");
    let rows: Option<usize> = args.get(1).and_then(|r| r.parse().ok()).filter(|&r| r > 0);
    let set = arg(2, "UC1");
    let (k, m, delta): (u64, u64, f64) =
        (arg(3, "10").parse().unwrap(), arg(4, "2").parse().unwrap(), arg(5, "0.04").parse().unwrap());
    let preset = if name == "informs" { RtPreset::Informs } else { RtPreset::Ehrd };
    let t = Instant::now();
    let ds = datasets::load(&name, rows, None)?;
    let u = utility_constraints(preset, &set)?;
    eprintln!("{name} {} records, {set}: generated in {:.2} s", ds.num_rows(), t.elapsed().as_secs_f64());
    let t = Instant::now();
    let config = ArtucConfig::new(k, m, delta, u64::MAX).with_options("seed=7")?;
    let source = Source { name: &name, meta: &ds.meta, batches: &ds.batches };
    let out = call(source, ("u", &[u]), &config, Variant::Artuc, &Phases(Mutex::new(None)))?;
    let (table, r) = (&out.table, &out.result);
    let codes: u64 = table.codes.records.iter().map(|r| r.len() as u64).sum();
    println!(
        "{name} n={} {set} k={k} m={m} delta={delta}: {:.2} s, clusters {}, NCP {:.4}, UL {:.4}, suppressed {} of {codes} \
         codes ({:.1} %), GenDiag runs {}",
        table.len(),
        t.elapsed().as_secs_f64(),
        r.measures.clusters,
        r.measures.ncp,
        r.measures.ul,
        r.measures.suppressed_codes,
        100.0 * r.measures.suppressed_codes as f64 / codes as f64,
        r.evaluations
    );
    if arg(6, "") == "sql" {
        drop(out);
        sql_call(&name, rows, &set, (k, m, delta))?;
    }
    Ok(())
}

/// The same call through SQL: load, constraints, `artuc(...)`, and its report (`time_ms` is
/// the table function's own clock: reading the table, the method, building the release).
fn sql_call(name: &str, rows: Option<usize>, set: &str, (k, m, delta): (u64, u64, f64)) -> Result<(), Box<dyn Error>> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let (ctx, _registry) = anonfusion::session();
    let sql = |q: String| rt.block_on(async { ctx.sql(&q).await?.collect().await });
    let rows = rows.map_or(String::new(), |r| format!(", {r}"));
    sql(format!("SELECT COUNT(*) FROM load_dataset('{name}'{rows})"))?;
    sql(format!("SELECT COUNT(*) FROM load_constraints('{name}', '{set}')"))?;
    let t = Instant::now();
    let cons = format!("{name}_{}", set.to_ascii_lowercase());
    sql(format!("SELECT COUNT(*) FROM artuc('{name}', 'a', '{cons}', {k}, {m}, {delta}, {}, 'seed=7')", i64::MAX))?;
    let wall = t.elapsed().as_secs_f64();
    let report = sql("SELECT clusters, ncp, ul, suppressed_codes, gendiag_runs, time_ms FROM a_report".into())?;
    println!("SQL call: {wall:.2} s wall\n{}", pretty_format_batches(&report)?);
    Ok(())
}
