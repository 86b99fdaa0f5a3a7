//! The `anonfusion` binary: argument parsing and dispatch; the logic lives in `cli`.

mod cli;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use cli::format::Format;
use cli::{Flow, Runner};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// SQL-queryable anonymization engine for health data.
///
/// Without -f, -c or a subcommand: an interactive session on a terminal, or the statements
/// read from standard input when it is piped (exit status 1 if any of them failed).
#[derive(Parser)]
#[command(name = "anonfusion", version)]
struct Args {
    /// Run SQL script files in order, then exit; stops at the first failing statement
    #[arg(short = 'f', long = "file", value_name = "FILE", num_args = 1..)]
    files: Vec<PathBuf>,
    /// Run SQL statements, then exit (repeatable; -c and -f run in the order given)
    #[arg(short = 'c', long = "command", value_name = "SQL", allow_hyphen_values = true)]
    commands: Vec<String>,
    /// Output format of query results
    #[arg(long, value_enum, default_value_t = Format::Table, global = true)]
    format: Format,
    /// Run plans on a Ballista cluster: 'standalone' (in-process) or a scheduler URL such as
    /// df://localhost:50050 (built with the `ballista` feature; docs/scale-out.md)
    #[cfg(feature = "ballista")]
    #[arg(long, value_name = "CLUSTER", global = true)]
    ballista: Option<String>,
    /// With --ballista: directory the cluster writes releases and catalogs into as Parquet
    /// (default <temp dir>/anonfusion-<pid>); on a remote cluster, storage shared by the client,
    /// the scheduler and the executors at the same path
    #[cfg(feature = "ballista")]
    #[arg(long, value_name = "DIR", global = true, requires = "ballista")]
    ballista_output: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the bundled demo script, showing each statement and its result
    Demo {
        /// Write the Q1 chart (SVG) to FILE (default: a new file in the temporary directory,
        /// named when the demo ends)
        #[arg(long, value_name = "FILE")]
        chart: Option<PathBuf>,
    },
    /// Compare queries on an original table with their estimates from a release
    ///
    /// Example: anonfusion evaluate --original nps --release nps_g
    ///   --load "SELECT * FROM load_dataset('nps')"
    ///   --load "SELECT * FROM generalize('nps', 'nps_g', '2,0,1,1,0')" --plot q1.svg sql/q1.sql
    // Boxed: its flags are most of the enum's size (clippy::large_enum_variant).
    Evaluate(Box<cli::evaluate::EvaluateArgs>),
}

fn main() -> ExitCode {
    tune_malloc();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt.block_on(session()),
        Err(e) => {
            eprintln!("Error: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// glibc's allocator kept from handing freed buffers back to the kernel between passes. A call
/// allocates and frees column-sized buffers (tens of MB at 5 M rows) many times; by default
/// glibc maps each one over 32 MiB afresh and trims freed heap memory at once, so every pass
/// pays the kernel to map and zero its pages again, a quarter of a two-core call's time and
/// much of it on one core (docs/results/scaling.md). Buffers up to 64 MiB (the most a worker
/// thread's heap holds) now come from the heaps, and up to 1 GiB of freed memory stays there
/// to be reused; larger ones are still mapped and unmapped, as before. Set before any thread
/// starts.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; no allocation is in flight.
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, 64 << 20);
        nix::libc::mallopt(nix::libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

async fn session() -> ExitCode {
    let matches = Args::command().get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => e.exit(),
    };
    let (ctx, registry) = match open_session(&args).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The CLI keeps budgets across runs: $ANONFUSION_LEDGER or the user's data directory.
    match anonfusion::dp::ledger::Ledger::standard() {
        Ok(ledger) => registry.set_ledger(ledger),
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::FAILURE;
        }
    }
    let mut runner = Runner::new(ctx, args.format);
    registry.set_progress(runner.bar.clone());
    match run(&mut runner, &registry, args, &matches).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The local session, or with `--ballista` one whose plans run on the cluster.
async fn open_session(
    args: &Args,
) -> Result<(datafusion::prelude::SessionContext, std::sync::Arc<anonfusion::Registry>), String> {
    #[cfg(feature = "ballista")]
    if let Some(cluster) = &args.ballista {
        let cluster = anonfusion::scale::Cluster::parse(cluster).map_err(|e| e.to_string())?;
        let output = match &args.ballista_output {
            Some(dir) => anonfusion::sql::ParquetOutput::new(dir),
            None => anonfusion::sql::ParquetOutput::temp(),
        };
        return anonfusion::scale::session_with_output(&cluster, output).await.map_err(|e| e.to_string());
    }
    let _ = args;
    Ok(anonfusion::session())
}

/// Scripts (`-f`) and statements (`-c`) in the order they appear on the command line, so
/// `-c "SELECT * FROM load_dataset('nps')" -f sql/q1.sql` loads before it queries.
fn sources_in_order(args: &Args, matches: &ArgMatches) -> Vec<Source> {
    let mut out: Vec<(usize, Source)> = Vec::new();
    if let Some(idx) = matches.indices_of("files") {
        out.extend(idx.zip(&args.files).map(|(i, f)| (i, Source::File(f.clone()))));
    }
    if let Some(idx) = matches.indices_of("commands") {
        out.extend(idx.zip(&args.commands).map(|(i, c)| (i, Source::Command(c.clone()))));
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, s)| s).collect()
}

enum Source {
    File(PathBuf),
    Command(String),
}

async fn run(
    runner: &mut Runner,
    registry: &std::sync::Arc<anonfusion::Registry>,
    args: Args,
    matches: &ArgMatches,
) -> Result<ExitCode, String> {
    let mut out = std::io::stdout();
    match &args.command {
        Some(Command::Demo { chart }) => {
            cli::demo::run(runner, registry, chart.as_deref(), &mut out).await?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Evaluate(evaluate)) => {
            cli::evaluate::run(evaluate, args.format, &runner.ctx, registry, &mut out).await?;
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    if !args.files.is_empty() || !args.commands.is_empty() {
        for source in sources_in_order(&args, matches) {
            let flow = match source {
                Source::File(file) => {
                    let script =
                        std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
                    runner.run_script(&file.display().to_string(), &script, &mut out).await?
                }
                Source::Command(command) => runner.run_script("-c", &command, &mut out).await?,
            };
            if flow == Flow::Quit {
                break;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if std::io::stdin().is_terminal() {
        cli::repl::run(runner).await?;
        Ok(ExitCode::SUCCESS)
    } else {
        // Each error is printed where it happened; the status tells a calling script.
        match runner.run_lines(std::io::stdin().lock(), &mut out, &mut std::io::stderr()).await {
            0 => Ok(ExitCode::SUCCESS),
            _ => Ok(ExitCode::FAILURE),
        }
    }
}
