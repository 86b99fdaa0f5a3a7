//! `anonfusion-scheduler`: a Ballista scheduler that decodes anonfusion's plans (the stock
//! `ballista-scheduler` does not know the codec that ships in-memory tables). Built with the
//! `ballista` feature; docs/scale-out.md says how to run a cluster.

use clap::Parser;
use std::process::ExitCode;

#[derive(Parser)]
#[command(version, about = "Ballista scheduler for anonfusion plans (docs/scale-out.md)")]
struct Args {
    /// Address to listen on
    #[arg(long, default_value = "0.0.0.0")]
    bind_host: String,
    /// Port to listen on (clients connect to df://HOST:PORT)
    #[arg(long, default_value_t = 50050)]
    port: u16,
    /// Host name executors and clients reach this scheduler by
    #[arg(long, default_value = "localhost")]
    external_host: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let addr = format!("{}:{}", args.bind_host, args.port);
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("Error: cannot listen on {addr} (--bind-host, --port): {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("anonfusion-scheduler listening on {addr}");
    match anonfusion::scale::server::run_scheduler(listener, &args.external_host).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}
