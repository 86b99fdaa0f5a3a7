//! Time per pass of kanon_anonymize and hceil_anonymize on the NPS-like table, locally or on a
//! Ballista cluster (docs/scale-out.md, "Benchmark"). Two steps, so the measured process never
//! holds the generated rows:
//!
//! ```sh
//! cargo run --release --features ballista --example scale_passes -- gen 1375900 /tmp/nps-1.4m
//! /usr/bin/time -v target/release/examples/scale_passes run standalone /tmp/nps-1.4m
//! ```
//!
//! `run ENGINE DIR [kanon|hceil|both]`: ENGINE is `local` (releases in client memory, as the
//! default build does), `local-parquet` (local plans, releases written as Parquet),
//! `standalone` (an in-process Ballista cluster, releases written as Parquet by its executor)
//! or a scheduler URL `df://host:port`. Prints one line per method: the three passes, the
//! whole call, and Q1 through the query-error harness.
//!
//! `scheduler PORT` and `executor SCHEDULER_PORT FLIGHT_PORT GRPC_PORT WORK_DIR` run what the
//! `anonfusion-scheduler` / `anonfusion-executor` binaries run (`scale::server`) from this
//! binary, so a cluster of separate processes (the client's memory measured alone) needs no
//! build beyond this example's.

use anonfusion::datasets::nps;
use anonfusion::scale::{Cluster, session_with_output, to_parquet};
use anonfusion::sql::{ParquetOutput, output::listing_table, replace_table};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::Float64Type;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::path::Path;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["gen", rows, dir] => generate(rows, Path::new(dir)).await,
        ["run", engine, dir] => run(engine, Path::new(dir), "both").await,
        ["run", engine, dir, method] => run(engine, Path::new(dir), method).await,
        ["scheduler", port] => scheduler(port).await,
        ["executor", scheduler, port, grpc, work] => executor(scheduler, port, grpc, work).await,
        _ => Err("usage: scale_passes gen ROWS DIR | run local|local-parquet|standalone|df://HOST:PORT DIR \
                  [kanon|hceil|both] | scheduler PORT | executor SCHEDULER_PORT FLIGHT_PORT GRPC_PORT WORK_DIR"
            .into()),
    };
    if let Err(e) = result {
        eprintln!("Error: {e}");
        std::process::exit(1);
    }
}

/// Generate the NPS-like table (seed 1) and write it as Parquet into `dir`, locally.
async fn generate(rows: &str, dir: &Path) -> Res<()> {
    let rows: usize = rows.parse().map_err(|_| format!("ROWS: '{rows}' is not a number"))?;
    let started = Instant::now();
    let ctx = anonfusion::new_session();
    ctx.sql(&format!("SELECT * FROM load_dataset('nps', {rows}, 1)")).await?.collect().await?;
    to_parquet(&ctx, "nps", dir).await?;
    println!("wrote {rows} rows to {} in {:.1} s", dir.display(), started.elapsed().as_secs_f64());
    Ok(())
}

fn port(s: &str) -> Res<u16> {
    Ok(s.parse().map_err(|_| format!("'{s}' is not a port number"))?)
}

async fn scheduler(p: &str) -> Res<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port(p)?)).await?;
    Ok(anonfusion::scale::server::run_scheduler(listener, "localhost").await?)
}

async fn executor(scheduler: &str, flight: &str, grpc: &str, work: &str) -> Res<()> {
    let opts = anonfusion::scale::server::ExecutorOptions {
        bind_host: "127.0.0.1".into(),
        external_host: Some("localhost".into()),
        port: port(flight)?,
        grpc_port: port(grpc)?,
        scheduler_port: port(scheduler)?,
        work_dir: Some(work.into()),
        ..Default::default()
    };
    Ok(anonfusion::scale::server::run_executor(opts).await?)
}

async fn session(engine: &str) -> Res<(SessionContext, std::sync::Arc<anonfusion::Registry>)> {
    let config = || SessionConfig::new().with_information_schema(true);
    Ok(match engine {
        "local" => anonfusion::session(),
        "local-parquet" => {
            let ctx = SessionContext::new_with_config(ParquetOutput::temp().apply(config()));
            let registry = anonfusion::register_all(&ctx);
            (ctx, registry)
        }
        other => session_with_output(&Cluster::parse(other)?, ParquetOutput::temp()).await?,
    })
}

async fn run(engine: &str, dir: &Path, method: &str) -> Res<()> {
    let (ctx, registry) = session(engine).await?;
    let url = format!("{}/", dir.to_str().ok_or("DIR is not valid UTF-8")?);
    replace_table(&ctx, "nps", listing_table(&url, nps::schema())?)?;
    registry.set("nps", nps::meta()?);
    let calls: Vec<(&str, &str)> = [
        ("kanon", "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 10)"),
        ("hceil", "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 10, 0.2, 'seed=1')"),
    ]
    .into_iter()
    .filter(|(m, _)| method == "both" || method == *m)
    .collect();
    if calls.is_empty() {
        return Err(format!("method: '{method}' is not kanon, hceil or both").into());
    }
    println!("engine\tmethod\trows\taggregate_s\tsearch_s\tmaterialize_s\tcall_s\tq1_s");
    for (m, sql) in calls {
        let started = Instant::now();
        let rows = first_f64(&ctx.sql(sql).await?.collect().await?)?;
        let call = started.elapsed().as_secs_f64();
        let out = if m == "kanon" { "nps_k" } else { "nps_h" };
        let report = format!("SELECT aggregate_ms, search_ms, materialize_ms FROM {out}_report");
        let passes = ctx.sql(&report).await?.collect().await?;
        let pass = |i: usize| passes[0].column(i).as_primitive::<Float64Type>().value(0) / 1e3;
        let q1 = include_str!("../sql/q1.sql").replace('\'', "''");
        let catalog = if m == "hceil" { format!(", '{out}_catalog'") } else { String::new() };
        let started = Instant::now();
        ctx.sql(&format!("SELECT * FROM query_error('{q1}', 'nps', '{out}'{catalog})")).await?.collect().await?;
        let q1 = started.elapsed().as_secs_f64();
        println!("{engine}\t{m}\t{rows}\t{:.2}\t{:.2}\t{:.2}\t{call:.2}\t{q1:.2}", pass(0), pass(1), pass(2));
    }
    Ok(())
}

fn first_f64(batches: &[RecordBatch]) -> Res<f64> {
    let b = batches.iter().find(|b| b.num_rows() > 0).ok_or("empty result")?;
    let c = datafusion::arrow::compute::cast(b.column(0), &datafusion::arrow::datatypes::DataType::Float64)?;
    let c = c.as_primitive::<Float64Type>();
    if c.is_null(0) { Err("NULL result".into()) } else { Ok(c.value(0)) }
}
