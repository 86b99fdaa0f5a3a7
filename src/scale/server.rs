//! A scheduler and an executor that can run anonfusion's plans: Ballista's own, built from the
//! ballista-scheduler and ballista-executor library APIs with [`MemTableCodec`] in place of
//! Ballista's logical codec. The stock `ballista-scheduler` cannot decode a plan that carries
//! an in-memory table (every table function's output, the materialization's lookup tables), so
//! a remote cluster runs these (binaries `anonfusion-scheduler` and `anonfusion-executor`).
//!
//! Scalar functions: anonfusion defines none of its own (the evaluation, Q1–Q4 and the
//! query-error harness, uses DataFusion's built-ins; table functions run in the client, where
//! Ballista plans them), but the executors must know every function the client's plans use.
//! Ballista's executor registry holds only DataFusion's core scalar functions, not the nested
//! ones (`range`, `array_has`, ...), so an executor rejects the h-ceiling release plan
//! (`unnest(range(n))`) and set-valued queries; ours registers the client's full set
//! ([`super::function_registry`]). The scheduler's default session already has them, and ours adds
//! the ledger's `anon_fingerprint` aggregate.

use super::MemTableCodec;
use crate::error::{AnonError, Result};
use ballista_core::extension::SessionConfigExt;
use ballista_core::utils::default_session_builder;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use std::sync::Arc;

/// The session config every server-side session starts from: Ballista's, with our codec.
fn session_config() -> SessionConfig {
    SessionConfig::new_with_ballista().with_ballista_logical_extension_codec(Arc::new(MemTableCodec::default()))
}

/// The scheduler's session: Ballista's default plus the engine's own aggregate
/// `anon_fingerprint` (the privacy ledger's account key: a seeded or DP release fingerprints its
/// source in a plan the scheduler must decode; without it the scheduler refused the plan with
/// "LogicalExtensionCodec is not provided for aggregate function anon_fingerprint").
fn session_builder(config: SessionConfig) -> datafusion::common::Result<datafusion::execution::SessionState> {
    use datafusion::execution::FunctionRegistry;
    let mut state = default_session_builder(config)?;
    state.register_udaf(crate::dp::ledger::fingerprint_udaf())?;
    Ok(state)
}

fn failed(what: &str, e: impl std::fmt::Display) -> AnonError {
    AnonError::argument(what, "cluster", e.to_string())
}

/// Run a scheduler on an already bound listener until the process ends. `external_host` is
/// the name executors and clients reach it by.
pub async fn run_scheduler(listener: tokio::net::TcpListener, external_host: &str) -> Result<()> {
    let port = listener.local_addr().map_err(|e| AnonError::io("scheduler listener", e))?.port();
    let mut config = SchedulerConfig::default().with_hostname(external_host).with_port(port);
    config.override_logical_codec = Some(Arc::new(MemTableCodec::default()));
    let config = config
        .with_override_config_producer(Arc::new(session_config))
        .with_override_session_builder(Arc::new(session_builder));
    config.validate().map_err(|e| failed("anonfusion-scheduler", e))?;
    let cluster = BallistaCluster::new_from_config(&config).await.map_err(|e| failed("anonfusion-scheduler", e))?;
    let scheduler = create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, Arc::new(config))
        .await
        .map_err(|e| failed("anonfusion-scheduler", e))?;
    start_grpc_service_with_listener(listener, scheduler).await.map_err(|e| failed("anonfusion-scheduler", e))
}

/// Where an executor listens and which scheduler it serves.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    pub bind_host: String,
    /// Host name the scheduler and other executors reach this one by.
    pub external_host: Option<String>,
    /// Arrow Flight port (shuffle data, results).
    pub port: u16,
    /// gRPC port (tasks from the scheduler).
    pub grpc_port: u16,
    pub scheduler_host: String,
    pub scheduler_port: u16,
    /// Tasks run at once; 0 means one per CPU core.
    pub concurrent_tasks: usize,
    /// Shuffle files; default a temporary directory.
    pub work_dir: Option<String>,
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        ExecutorOptions {
            bind_host: "0.0.0.0".into(),
            external_host: None,
            port: 50051,
            grpc_port: 50052,
            scheduler_host: "localhost".into(),
            scheduler_port: 50050,
            concurrent_tasks: 0,
            work_dir: None,
        }
    }
}

/// Run an executor until it is told to stop (SIGTERM, Ctrl-C, or the scheduler).
pub async fn run_executor(opts: ExecutorOptions) -> Result<()> {
    let config = ExecutorProcessConfig {
        bind_host: opts.bind_host,
        external_host: opts.external_host,
        port: opts.port,
        grpc_port: opts.grpc_port,
        scheduler_host: opts.scheduler_host,
        scheduler_port: opts.scheduler_port,
        // Retry rather than fail at once: executors are usually started beside a scheduler
        // still booting. (Ballista 55's retry loop in fact retries until it connects.)
        scheduler_connect_timeout_seconds: 30,
        vcores: opts.concurrent_tasks,
        work_dir: opts.work_dir,
        override_logical_codec: Some(Arc::new(MemTableCodec::default())),
        override_function_registry: Some(super::function_registry()),
        override_config_producer: Some(Arc::new(session_config)),
        ..Default::default()
    };
    start_executor_process(Arc::new(config)).await.map_err(|e| failed("anonfusion-executor", e))
}
