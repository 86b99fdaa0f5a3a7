//! `anonfusion-executor`: a Ballista executor that decodes anonfusion's plans (the in-memory
//! table codec). Built with the `ballista` feature; docs/scale-out.md says how to run a
//! cluster.

use anonfusion::scale::server::{ExecutorOptions, run_executor};
use clap::Parser;
use std::process::ExitCode;

#[derive(Parser)]
#[command(version, about = "Ballista executor for anonfusion plans (docs/scale-out.md)")]
struct Args {
    /// Address to listen on
    #[arg(long, default_value = "0.0.0.0")]
    bind_host: String,
    /// Host name the scheduler and other executors reach this executor by (default: its IP)
    #[arg(long)]
    external_host: Option<String>,
    /// Arrow Flight port (shuffle data and results)
    #[arg(long, default_value_t = 50051)]
    port: u16,
    /// gRPC port (tasks from the scheduler)
    #[arg(long, default_value_t = 50052)]
    grpc_port: u16,
    /// Scheduler host
    #[arg(long, default_value = "localhost")]
    scheduler_host: String,
    /// Scheduler port
    #[arg(long, default_value_t = 50050)]
    scheduler_port: u16,
    /// Tasks run at once (0: one per CPU core)
    #[arg(long, default_value_t = 0)]
    concurrent_tasks: usize,
    /// Directory for shuffle files (default: a temporary directory)
    #[arg(long)]
    work_dir: Option<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let a = Args::parse();
    let opts = ExecutorOptions {
        bind_host: a.bind_host,
        external_host: a.external_host,
        port: a.port,
        grpc_port: a.grpc_port,
        scheduler_host: a.scheduler_host,
        scheduler_port: a.scheduler_port,
        concurrent_tasks: a.concurrent_tasks,
        work_dir: a.work_dir,
    };
    match run_executor(opts).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}
