//! The one table-function adapter every publishing method goes through.
//!
//! A method's SQL function is a [`MethodSpec`]: its name, signature, how its arguments after
//! `(source, output)` parse into parameters, and how a parsed call runs. [`MethodFn`] owns the
//! rest of the sequence, the same for every method (DataFusion's `functions-table` crate, one
//! impl serving `generate_series` and `range`, is the model):
//!
//! 1. arguments: count, `source`, `output` (normalized the way DataFusion resolves it), then
//!    the spec's own parsing with errors that name the argument;
//! 2. the memo key, derived from the parsed parameters (their `Debug` form), the identity of
//!    every table the call reads and the registry's declaration generation;
//! 3. declarations: the source's roles and hierarchies, complete, and no numeric
//!    hierarchy derived from the data (its bounds would be published); nothing runs under a
//!    plain `EXPLAIN` ([`super::explain`]);
//! 4. output names: every table the call will register is checked against [`Outputs`] before
//!    anything runs (an output may only replace an earlier release of the same function);
//! 5. run: a method reads the [`Source`] the adapter hands it and returns a [`Release`]
//!    (`methods::contract`), which [`Call::publish`] builds into tables: the rows in memory or
//!    as Parquet ([`super::output`]), in a random order drawn once while they are built, the
//!    side tables and the report;
//! 6. register every output last, so a failed call leaves the catalog as it was; every output
//!    carries only the metadata the engine defines for it, never the source's
//!    ([`super::output::published`]);
//! 7. memoize deterministic calls, so `EXPLAIN` or a second reference does not recompute.

use super::args::Args;
use super::glue::Memo;
use super::glue::session_context;
use super::output::{Labels, ParquetOutput, published};
use super::report::{Value, one_row};
use crate::dp::ledger::{Charge, Reservation};
use crate::encode::source::Source;
use crate::error::{AnonError, Result};
use crate::meta::TableMeta;
use crate::methods::PassTimes;
use crate::methods::contract::{Release, Rows, Side};
use crate::methods::options::Options;
use crate::session::Registry;
use crate::session::runtime::{block_on, block_on_cancellable};
use crate::stamp::ContentStamp;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Instant;

/// What a method's table function declares; [`MethodFn`] does the rest.
pub(crate) trait MethodSpec: Debug + Send + Sync + 'static {
    /// Parsed arguments after `(source, output)`. Their `Debug` form is the memo key, so it
    /// must show every field that changes the result.
    type Params: Debug;
    /// The SQL name.
    const NAME: &'static str;
    /// The usage line shown in argument errors; its `options` placeholder is filled in from
    /// [`Self::OPTIONS`].
    const SIGNATURE: &'static str;
    /// The declaration of the options string, when the function takes one.
    const OPTIONS: Option<&'static Options> = None;
    /// Fewest and most arguments, `source` and `output` included.
    const ARITY: (usize, usize);

    /// Parse and validate the arguments from index 2 on.
    fn parse(&self, args: &Args) -> Result<Self::Params>;

    /// Tables the call reads besides the source (a constraints table): their identity is part
    /// of the memo key, and they must exist.
    fn inputs(&self, _params: &Self::Params) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Whether the same call on the same tables gives the same result (a seeded or
    /// deterministic method): only then is the result memoized.
    fn deterministic(&self, params: &Self::Params) -> bool;

    /// The suffixes of the side tables a call may register (`report`, `catalog`, ...); every
    /// name `<output>_<suffix>` is checked before the call runs.
    fn side_tables(&self, params: &Self::Params) -> Vec<&'static str>;

    /// The privacy-budget charge of a differentially private call, and how it splits (for the
    /// ledger's `parts`). It is reserved in the source's account before `run` draws any noise,
    /// committed once every output is built and before any is registered, and returned if the
    /// call fails. `None`: the method promises no differential privacy and charges nothing.
    /// `meta`: the source's declarations (a declared plan can decide what a call spends). Checks
    /// that need only public quantities (the size of what the call would realize) belong here,
    /// before anything is reserved or read.
    fn charge(&self, _params: &Self::Params, _source: &str, _meta: &TableMeta) -> Result<Option<(Charge, String)>> {
        Ok(None)
    }

    /// The call's seed, if it has one (tests): the release's row order is drawn from it.
    fn seed(&self, _params: &Self::Params) -> Option<u64> {
        None
    }

    /// Run the method and build its outputs. Nothing may be registered here.
    fn run(&self, call: &Call<'_>, params: &Self::Params) -> Result<Outputs>;
}

/// A parsed call: the live session, the source and output names, and the source's declarations.
pub(crate) struct Call<'a> {
    pub(crate) ctx: &'a SessionContext,
    pub(crate) registry: &'a Registry,
    pub(crate) source: &'a str,
    pub(crate) output: &'a str,
    pub(crate) meta: &'a TableMeta,
    started: Instant,
    budget: Budget,
    /// The seed the release's row order is drawn from (none: the OS).
    seed: Option<u64>,
}

/// A DP call's charge between the adapter's check and the method's reservation: the adapter
/// checks that the budget has room before anything is read; the method reserves it
/// ([`Call::reserve_budget`]) once its data-dependent checks have passed and before it draws
/// any noise, so an error from the data spends nothing and a refusal for lack of budget comes
/// before any work; the adapter commits it once every output is built.
struct Budget {
    function: &'static str,
    pending: Option<(crate::dp::ledger::Account, Charge)>,
    reserved: std::sync::Mutex<Option<crate::dp::ledger::Reservation>>,
}

impl Call<'_> {
    /// Reserve the call's charge (once; later calls do nothing). Every differentially private
    /// method calls this after its data-dependent checks and before its first noise draw; the
    /// adapter refuses to publish a charged call that did not.
    pub(crate) fn reserve_budget(&self) -> Result<()> {
        let Some((account, charge)) = &self.budget.pending else { return Ok(()) };
        let mut reserved = self.budget.reserved.lock().unwrap_or_else(|e| e.into_inner());
        if reserved.is_none() {
            *reserved = Some(super::ledger_fn::reserve(self.registry, self.budget.function, account, charge.clone())?);
        }
        Ok(())
    }

    /// Milliseconds since the call started (reports' `time_ms`).
    pub(crate) fn elapsed_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1e3
    }

    /// The source as a method reads it.
    pub(crate) fn read(&self) -> Result<Source> {
        block_on(Source::of(self.ctx, self.source, self.meta))
    }

    /// A table the call reads besides the source (a constraints table), without declarations.
    pub(crate) fn read_input(&self, name: &str) -> Result<Source> {
        block_on(Source::of(self.ctx, name, &TableMeta::default()))
    }

    /// Build a method's [`Release`] into the call's outputs: its rows (timed as the release's
    /// `materialize_ms`), its side tables, then its report, so the report's `time_ms` covers
    /// all of it.
    pub(crate) fn publish(&self, method: &str, release: Release) -> Result<Outputs> {
        let Release { rows, report, side, timed, mut passes } = release;
        let progress = self.registry.progress();
        let start = Instant::now();
        let rows = block_on_cancellable(progress.as_ref(), self.rows(rows))?;
        if let Some(p) = &mut passes {
            // Plus whatever the method timed preparing them (a plan's planning, cells).
            p.materialize_ms += PassTimes::since(start);
        }
        let mut out = Outputs { release: rows, side: Vec::new() };
        for (suffix, table) in side {
            let table = match table {
                Side::Rows(schema, batches) => {
                    super::output::publish_batches(self.ctx, &self.side_name(suffix), schema, batches)?
                }
                Side::Row(cells) => one_row(cells)?,
                Side::Memory(schema, batches) => super::glue::mem_table(schema, batches)?,
            };
            out = out.with(suffix, table);
        }
        match (report, timed) {
            (None, _) => Ok(out),
            (Some(cells), true) => out.with_timed_report(self, method, cells, passes.as_ref()),
            (Some(cells), false) => out.with_report(self, method, cells),
        }
    }

    /// The release's rows: in memory, permuted as they are built, or with [`ParquetOutput`]
    /// written by a plan that orders them by `random()` ([`super::output::publish`]).
    async fn rows(&self, rows: Rows) -> Result<Arc<dyn TableProvider>> {
        let parquet = ParquetOutput::of(self.ctx);
        match (rows, parquet) {
            (Rows::Plan(df), Some(_)) => super::output::publish(self.ctx, self.output, df).await,
            (Rows::Plan(df), None) => {
                let schema = df.schema().inner().clone();
                shuffled_table(schema, df.collect().await?, self.seed)
            }
            (Rows::Batches(schema, batches), _) => shuffled_table(schema, batches, self.seed),
            (Rows::Classes(cells), None) => {
                // Built once, straight in the drawn order: no batches in the cells' order to
                // shuffle afterwards (a second copy of every row).
                let batch = cells.batch_drawn(&mut shuffle_rng(self.seed)?)?;
                Ok(Arc::new(MemTable::try_new(cells.schema.clone(), vec![vec![batch]])?))
            }
            (Rows::Classes(cells), Some(out)) => {
                // Built by the session's executors from the release's cells, which the client
                // writes beside the release (a plan message could not carry them at scale) and
                // removes once the release is written.
                let batch = cells.cells()?;
                let (dir, written) =
                    super::output::write_from_client(&out, &self.side_name("cells"), batch.schema(), &[batch])?;
                let rows = async {
                    super::output::publish(self.ctx, self.output, cells.expand(self.ctx.read_table(written)?)?).await
                }
                .await;
                let _ = std::fs::remove_dir_all(&dir);
                rows
            }
        }
    }

    /// `<output>_<suffix>`.
    pub(crate) fn side_name(&self, suffix: &str) -> String {
        format!("{}_{suffix}", self.output)
    }
}

/// What a call publishes: the release (also the function's result) and its side tables by
/// suffix. The report is a side table like the others (`report`).
pub(crate) struct Outputs {
    pub(crate) release: Arc<dyn TableProvider>,
    side: Vec<(&'static str, Arc<dyn TableProvider>)>,
}

impl Outputs {
    /// Add a side table `<output>_<suffix>`.
    pub(crate) fn with(mut self, suffix: &'static str, table: Arc<dyn TableProvider>) -> Self {
        self.side.push((suffix, table));
        self
    }

    /// Add the one-row report `<output>_report`, `method` and `source` first.
    pub(crate) fn with_report(self, call: &Call<'_>, method: &str, cells: Vec<(&str, Value)>) -> Result<Self> {
        let mut all = vec![("method", Value::Text(method.into())), ("source", Value::Text(call.source.into()))];
        all.extend(cells);
        Ok(self.with("report", super::report::one_row(all)?))
    }

    /// The report of a method that publishes its running time: `cells`, then the call's
    /// `time_ms`, then the method's passes (`aggregate_ms`, `search_ms`, `materialize_ms`) when
    /// it times them. Differentially private releases use [`Self::with_report`]: their time
    /// goes to the opt-in diagnostics only.
    pub(crate) fn with_timed_report(
        self,
        call: &Call<'_>,
        method: &str,
        mut cells: Vec<(&str, Value)>,
        passes: Option<&crate::methods::PassTimes>,
    ) -> Result<Self> {
        cells.push(("time_ms", Value::Float(call.elapsed_ms())));
        if let Some(p) = passes {
            cells.extend([
                ("aggregate_ms", Value::Float(p.aggregate_ms)),
                ("search_ms", Value::Float(p.search_ms)),
                ("materialize_ms", Value::Float(p.materialize_ms)),
            ]);
        }
        self.with_report(call, method, cells)
    }
}

/// The adapter: a [`MethodSpec`] as a DataFusion table function.
#[derive(Debug)]
pub(crate) struct MethodFn<S: MethodSpec> {
    spec: S,
    registry: Arc<Registry>,
    memo: Memo,
}

/// Register `spec` under its name on `ctx`.
pub(crate) fn register<S: MethodSpec>(ctx: &SessionContext, registry: Arc<Registry>, spec: S) {
    ctx.register_udtf(S::NAME, Arc::new(MethodFn { spec, registry, memo: Memo::default() }));
}

impl<S: MethodSpec> TableFunctionImpl for MethodFn<S> {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        Ok(self.call(&args)?)
    }
}

impl<S: MethodSpec> MethodFn<S> {
    fn call(&self, args: &TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let a = Args::with_options(S::NAME, S::SIGNATURE, S::OPTIONS, args.exprs(), S::ARITY.0, S::ARITY.1)?;
        let (source, output) = a.source_output()?;
        let params = self.spec.parse(&a)?;
        let ctx = session_context(args)?;
        let mut key = format!("{output}|{params:?}|g{}", self.registry.generation());
        let mut inputs = Vec::new();
        for (role, name) in std::iter::once(("source", source.clone())).chain(self.spec.inputs(&params)) {
            key.push_str(&format!("|{role}:{name}"));
            inputs.push(lookup(&ctx, role, &name)?);
        }
        // Taken before any is read: rows written meanwhile end the memo's entry.
        let stamps: Vec<ContentStamp> = inputs.iter().map(ContentStamp::of).collect();
        let deterministic = self.spec.deterministic(&params);
        if deterministic && let Some(t) = self.memo.get(&ctx, &key, &inputs) {
            return Ok(t);
        }
        super::explain::refuse_when_planning_only(S::NAME)?;
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        for q in meta.quasi_identifiers() {
            crate::hierarchy::check_publishable_bounds(&source, q, meta.hierarchy(&source, q)?)?;
        }
        let names = output_names(&output, &self.spec.side_tables(&params));
        self.registry.check_outputs(&ctx, S::NAME, &source, &names)?;
        let charge = self.spec.charge(&params, &source, &meta)?;
        if charge.as_ref().is_some_and(|(c, _)| c.is_seeded_dp()) {
            super::settings::check_seeded_dp(&ctx, S::NAME)?;
        }
        let pending = match &charge {
            Some((c, _)) => {
                Some((super::ledger_fn::admit(&self.registry, &ctx, S::NAME, &source, &meta, c)?, c.clone()))
            }
            None => None,
        };
        let charged = pending.is_some();
        let call = Call {
            ctx: &ctx,
            registry: &self.registry,
            source: &source,
            output: &output,
            meta: &meta,
            started: Instant::now(),
            budget: Budget { function: S::NAME, pending, reserved: Default::default() },
            seed: self.spec.seed(&params),
        };
        let progress = self.registry.progress();
        let run = self.spec.run(&call, &params);
        let reservation = call.budget.reserved.into_inner().unwrap_or_else(|e| e.into_inner());
        let outputs = match run {
            Ok(outputs) => outputs,
            Err(AnonError::CancelledAfterNoise) => {
                // Noise was drawn from the data: the charge stands though nothing is published
                // (docs/dp.md, "Cancelling a release"). Before any draw, a cancelled call fails
                // as `Cancelled` and the reservation (if any) is returned as it is dropped.
                if let (Some(r), Some((_, parts))) = (reservation, &charge) {
                    r.commit(&output, S::NAME, &format!("{parts}; {CANCELLED_AFTER_NOISE}"))?;
                }
                return Err(AnonError::CancelledAfterNoise);
            }
            Err(e @ AnonError::Cancelled) => return Err(e),
            Err(e) => {
                // A method reserves its charge after its data-dependent checks, just before its
                // first draw: an error after that may depend on the noise, and a refund would
                // make the failing call a free retry. The charge stands, as for a cancellation
                // after the noise (docs/dp.md, "Cancelling a release").
                if let (Some(r), Some((_, parts))) = (reservation, &charge) {
                    r.commit(&output, S::NAME, &format!("{parts}; {FAILED_AFTER_NOISE}"))?;
                }
                return Err(e);
            }
        };
        if charged && reservation.is_none() {
            return Err(AnonError::argument(
                S::NAME,
                "epsilon",
                "internal: the call drew no reservation of its charge",
            ));
        }
        // Ctrl-C while the outputs were built, before and after the shuffle (a second over a
        // million rows in the dev build): honoured before anything is registered.
        let late =
            |reservation: Option<Reservation>| late_cancel(progress.as_ref(), reservation, &charge, &output, S::NAME);
        let reservation = late(reservation)?;
        // Only a call that charged the ledger may label its release with a DP guarantee; only a
        // catalog names its sensitive column. Nothing else of the source's metadata is published.
        let labels = Labels { guarantee: charge.is_some(), sensitive_column: false };
        let release = published(outputs.release, labels)?;
        let reservation = late(reservation)?;
        let mut tables = vec![(output.clone(), release.clone())];
        for (suffix, table) in outputs.side {
            let name = format!("{output}_{suffix}");
            if !names.contains(&name) {
                return Err(AnonError::argument(
                    S::NAME,
                    "output",
                    format!("internal: side table '{suffix}' is not declared"),
                ));
            }
            tables.push((name, published(table, Labels { guarantee: false, sensitive_column: suffix == "catalog" })?));
        }
        if let (Some(r), Some((_, parts))) = (reservation, &charge) {
            r.commit(&output, S::NAME, parts)?;
        }
        let side: Vec<(String, Arc<dyn TableProvider>)> = tables[1..].to_vec();
        self.registry.outputs().publish(&ctx, S::NAME, tables, !charged)?;
        if deterministic {
            self.memo.put(key, &output, &release, None, &side, stamps);
        }
        Ok(release)
    }
}

/// A cancellation that arrived after `run` drew its noise and built the outputs: the call
/// fails, a DP call charged ([`AnonError::CancelledAfterNoise`], docs/dp.md, "Cancelling a
/// release"), a method without a charge as [`AnonError::Cancelled`]. Otherwise the
/// reservation is handed back for the commit.
fn late_cancel(
    progress: &dyn crate::progress::Progress,
    reservation: Option<Reservation>,
    charge: &Option<(Charge, String)>,
    output: &str,
    method: &str,
) -> Result<Option<Reservation>> {
    if !progress.cancelled() {
        return Ok(reservation);
    }
    match (reservation, charge) {
        (Some(r), Some((_, parts))) => {
            r.commit(output, method, &format!("{parts}; {CANCELLED_AFTER_NOISE}"))?;
            Err(AnonError::CancelledAfterNoise)
        }
        _ => Err(AnonError::Cancelled),
    }
}

/// What a charged, cancelled call's ledger record says after its parts.
const CANCELLED_AFTER_NOISE: &str = "cancelled after noise was drawn, nothing published";
/// The ledger's note on a call that failed after its reservation (its noise may be drawn).
const FAILED_AFTER_NOISE: &str = "failed after its budget was reserved for the noise, nothing published";

/// `batches` as an in-memory table, their rows in a uniformly random order drawn from the
/// call's seed (or the OS), so no row's position links it to its source row.
fn shuffled_table(schema: SchemaRef, batches: Vec<RecordBatch>, seed: Option<u64>) -> Result<Arc<dyn TableProvider>> {
    let batch = crate::encode::shuffle_rows(&schema, batches, &mut shuffle_rng(seed)?)?;
    Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
}

/// The RNG a release's row order is drawn from: the call's seed (or the OS), as a stream apart
/// from the method's own draws from the same seed.
fn shuffle_rng(seed: Option<u64>) -> Result<impl rand::Rng> {
    crate::dp::dp_rng(seed.map(|s| s ^ 0x7368_7566_666c_6521))
}

/// The release's name and every side table name a call may register.
fn output_names(output: &str, suffixes: &[&str]) -> Vec<String> {
    std::iter::once(output.to_string()).chain(suffixes.iter().map(|s| format!("{output}_{s}"))).collect()
}

/// A table the call reads, or an error naming its role (`source`, `constraints`).
fn lookup(ctx: &SessionContext, role: &str, name: &str) -> Result<Arc<dyn TableProvider>> {
    let what = if role == "source" { "not found".to_string() } else { format!("not found (the {role} table)") };
    block_on(ctx.table_provider(name)).map_err(|_| AnonError::table(name, what))
}
