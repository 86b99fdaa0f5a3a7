//! The privacy budget of each source table: what every differentially private release of it
//! spent, and the total its owner allows, kept in a file that survives restarts and is shared
//! safely by concurrent processes (`docs/dp.md`, "The privacy budget ledger").
//!
//! Accounts are keyed by a fingerprint of the table's rows ([`account_of`]), so a copy or a
//! rename of a table spends from the same budget. Epsilons and deltas compose by addition
//! (basic sequential composition). Amounts are integers on a grid: epsilon in units of 2^-32
//! (the samplers' grid, so the charge is the epsilon the noise is calibrated to and
//! 0.1 + 0.2 + 0.7 fits a budget of 1), delta in units of 2^-64 (a charge rounded up, a budget
//! down, so rounding never favours the release).
//!
//! A release first *reserves* its charge (refused without a budget, or if spent + reserved +
//! charge would pass it), which is written to the file before any noise is drawn, and *commits*
//! once its tables are built. A failed release drops the reservation and spends nothing; a
//! process that dies between the two leaves the reservation in the file, where it stays
//! counted as spent (the safe side: the noise may have been drawn and shown). A seeded call is
//! not private: it needs no budget, is charged nothing and is listed as `seeded (not private)`.

mod fingerprint;
mod store;

pub use fingerprint::{Account, FINGERPRINT_FUNCTION, account_of, fingerprint_udaf};

use super::EPSILON_GRID_BITS;
use crate::error::{AnonError, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};
use store::{Event, Record, State, Store};

/// Grid units per unit of epsilon.
const UNIT: f64 = (1u64 << EPSILON_GRID_BITS) as f64;
/// Delta is kept in units of 2^-64.
const DELTA_UNIT: f64 = 18_446_744_073_709_551_616.0;
/// The smallest epsilon the grid holds: 2^-32.
pub(crate) const MIN_EPSILON: f64 = 1.0 / UNIT;
/// The largest epsilon a budget or a charge may be: 2^20. Far beyond any meaningful privacy,
/// and small enough that sums of grid units cannot overflow.
pub(crate) const MAX_EPSILON: f64 = (1u64 << 20) as f64;
/// The environment variable naming the ledger file (the CLI and [`Ledger::standard`]).
pub(crate) const LEDGER_ENV: &str = "ANONFUSION_LEDGER";
/// What a seeded call is listed as.
pub(crate) const SEEDED: &str = "seeded (not private)";

/// An epsilon on the samplers' grid, rounded down by the samplers' own rounding
/// ([`super::epsilon_numerator`]); 0 for an epsilon they would refuse. The ledger checks the
/// range when it is reserved.
pub fn grid_units(epsilon: f64) -> u64 {
    super::epsilon_numerator("ledger", epsilon).unwrap_or(0)
}

fn to_epsilon(units: u64) -> f64 {
    units as f64 / UNIT
}

fn to_delta(units: u64) -> f64 {
    units as f64 / DELTA_UNIT
}

/// A number for a message: plain in the usual range, in exponent form outside it (a plain
/// 1e-300 would be 300 digits), with 9 significant digits: an epsilon on the grid (2^-32 apart)
/// then reads as typed, 0.6 rather than 0.5999999998603016.
pub(crate) fn shown(x: f64) -> String {
    fn trimmed(s: String) -> String {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
    }
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    if (1e-4..1e7).contains(&x.abs()) {
        let decimals = (8 - x.abs().log10().floor() as i32).max(0) as usize;
        return trimmed(format!("{x:.decimals$}"));
    }
    let s = format!("{x:.8e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
    format!("{}e{exponent}", trimmed(mantissa.to_string()))
}

fn limits() -> String {
    format!("between 2^-32 ({}) and 2^20 ({})", shown(MIN_EPSILON), shown(MAX_EPSILON))
}

/// Refuse an epsilon outside the grid's range (NaN and infinities included), naming the limits.
pub(crate) fn check_epsilon_range(function: &str, epsilon: f64) -> Result<()> {
    if (MIN_EPSILON..=MAX_EPSILON).contains(&epsilon) {
        return Ok(());
    }
    Err(AnonError::argument(function, "epsilon", format!("must be a number {}, got {}", limits(), shown(epsilon))))
}

/// A budget or charge's epsilon, checked against the grid's limits and rounded down onto it.
pub(crate) fn epsilon_units(function: &str, epsilon: f64) -> Result<u64> {
    super::epsilon_numerator(function, epsilon)
}

/// `delta * 2^64`, rounded up (`up`, a charge) or down (a budget); delta must be in [0, 1).
fn delta_units(function: &str, delta: f64, up: bool) -> Result<u64> {
    if !(0.0..1.0).contains(&delta) {
        return Err(AnonError::argument(
            function,
            "delta",
            format!("must be a number >= 0 and < 1, got {}", shown(delta)),
        ));
    }
    // delta = m * 2^e exactly; delta * 2^64 = m * 2^(e + 64), and m < 2^53.
    let (m, e) = super::decompose(delta);
    let (m, shift) = (m as u64, e + 64);
    Ok(if shift >= 0 {
        m << shift
    } else if shift <= -64 {
        u64::from(up && m != 0)
    } else {
        let floor = m >> -shift;
        floor + u64::from(up && floor << -shift != m)
    })
}

/// What a release asks of the budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    epsilon: u64,
    delta: u64,
    seeded: bool,
    guarantee: Option<String>,
}

impl Charge {
    /// An epsilon already on the grid (the sum of the parts' [`grid_units`]).
    pub fn epsilon(units: u64) -> Self {
        Charge { epsilon: units, delta: 0, seeded: false, guarantee: None }
    }

    /// Also spend `delta` ((epsilon, delta)-DP), charged rounded up onto 2^-64.
    pub(crate) fn with_delta(mut self, function: &str, delta: f64) -> Result<Self> {
        self.delta = delta_units(function, delta, true)?;
        Ok(self)
    }

    /// A seeded call: not private, charged nothing, needs no budget.
    pub(crate) fn seeded(mut self, seeded: bool) -> Self {
        self.seeded = seeded;
        self
    }

    /// The guarantee the ledger lists (default `epsilon-DP` or `(epsilon, delta)-DP`), e.g.
    /// `not differentially private` for a paper-faithful mode.
    pub(crate) fn guarantee(mut self, label: &str) -> Self {
        self.guarantee = Some(label.to_string());
        self
    }

    /// A seeded call of a mechanism that would otherwise be differentially private.
    pub(crate) fn is_seeded_dp(&self) -> bool {
        self.seeded && self.guarantee.is_none()
    }

    fn label(&self) -> String {
        match (&self.guarantee, self.seeded) {
            (_, true) => SEEDED.to_string(),
            (Some(g), _) => g.clone(),
            (None, _) if self.delta > 0 => "(epsilon, delta)-DP".to_string(),
            (None, _) => "epsilon-DP".to_string(),
        }
    }
}

/// Where the ledger lives.
#[derive(Debug)]
pub struct Ledger {
    store: Store,
    /// A scratch ledger of one session (tests, embedders who chose none): its directory is
    /// removed when the ledger is dropped.
    temporary: Option<PathBuf>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::temporary()
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        if let Some(dir) = &self.temporary {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Budget and totals of one account, in grid units.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    budget: Option<(u64, u64)>,
    /// Committed and reserved (a reservation counts as spent until it is dropped).
    spent: (u64, u64),
}

fn totals(state: &State, fingerprint: &str) -> Totals {
    let mut t = Totals::default();
    for r in state.records.iter().filter(|r| r.fingerprint == fingerprint) {
        t.add(r);
    }
    t
}

impl Totals {
    fn add(&mut self, r: &Record) {
        if r.event.is_budget() {
            self.budget = Some((r.epsilon, r.delta));
        } else {
            self.spent = (self.spent.0.saturating_add(r.epsilon), self.spent.1.saturating_add(r.delta));
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// A new record of `account`, numbered next, with every text field empty.
fn record(state: &mut State, event: Event, account: &Account, epsilon: u64, delta: u64) -> Record {
    let seq = state.next;
    state.next += 1;
    record_numbered(seq, event, account, epsilon, delta)
}

fn record_numbered(seq: u64, event: Event, account: &Account, epsilon: u64, delta: u64) -> Record {
    Record {
        seq,
        at_ms: now_ms(),
        event,
        fingerprint: account.fingerprint.clone(),
        rows: account.rows,
        table: account.table.clone(),
        epsilon,
        delta,
        guarantee: String::new(),
        release: String::new(),
        method: String::new(),
        parts: String::new(),
    }
}

/// One row of `anon_privacy_ledger`: a record, with the account's totals after it.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRow {
    pub(crate) seq: u64,
    pub(crate) recorded_at_ms: i64,
    pub(crate) fingerprint: String,
    pub(crate) rows: u64,
    /// The name used by this call.
    pub(crate) table: String,
    /// Every name the account was seen under, sorted, comma-separated.
    pub(crate) seen_as: String,
    /// `budget set`, `budget lowered`, `budget raised (force)`, `release`, or `reserved ...`.
    pub event: String,
    pub(crate) guarantee: Option<String>,
    pub release: Option<String>,
    pub(crate) method: Option<String>,
    pub(crate) parts: Option<String>,
    /// This record's charge (releases and reservations).
    pub(crate) epsilon: Option<f64>,
    pub(crate) delta: Option<f64>,
    /// The budget after this record.
    pub(crate) budget: Option<f64>,
    pub(crate) budget_delta: Option<f64>,
    pub spent: f64,
    pub(crate) spent_delta: f64,
    pub(crate) remaining: Option<f64>,
    pub(crate) remaining_delta: Option<f64>,
}

static TEMPORARY: AtomicU64 = AtomicU64::new(0);

impl Ledger {
    /// The ledger kept in `path` (created with its directory at the first change).
    pub fn open(path: impl Into<PathBuf>) -> Ledger {
        Ledger { store: Store { path: path.into() }, temporary: None }
    }

    /// The ledger the CLI uses: `$ANONFUSION_LEDGER`, or [`Ledger::default_path`].
    pub fn standard() -> Result<Ledger> {
        if let Some(p) = std::env::var_os(LEDGER_ENV).filter(|p| !p.is_empty()) {
            return Ok(Ledger::open(p));
        }
        Self::default_path().map(Ledger::open).ok_or_else(|| {
            AnonError::argument(
                "privacy ledger",
                LEDGER_ENV,
                "no user data directory (HOME, XDG_DATA_HOME or APPDATA) is set; set ANONFUSION_LEDGER to a file",
            )
        })
    }

    /// The user's data directory's `anonfusion/ledger.tsv`: `$XDG_DATA_HOME` or
    /// `~/.local/share` on Linux and other Unixes, `~/Library/Application Support` on macOS,
    /// `%APPDATA%` on Windows.
    pub(crate) fn default_path() -> Option<PathBuf> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let base = if cfg!(windows) {
            var("APPDATA")
        } else if cfg!(target_os = "macos") {
            var("HOME").map(|h| h.join("Library/Application Support"))
        } else {
            var("XDG_DATA_HOME").filter(|p| p.is_absolute()).or_else(|| var("HOME").map(|h| h.join(".local/share")))
        };
        base.map(|b| b.join("anonfusion").join("ledger.tsv"))
    }

    /// A scratch ledger for one session, in a fresh directory under the system's temporary
    /// directory, removed when the ledger is dropped. What [`crate::session`] and
    /// [`crate::register_all`] start with, so tests never write to the user's ledger.
    pub fn temporary() -> Ledger {
        let n = TEMPORARY.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("anonfusion-ledger-{}-{n}", std::process::id()));
        // Left by an earlier process with the same id: not ours to read.
        let _ = std::fs::remove_dir_all(&dir);
        Ledger { store: Store { path: dir.join("ledger.tsv") }, temporary: Some(dir) }
    }

    pub fn path(&self) -> &Path {
        &self.store.path
    }

    /// Kept across sessions (not [`Ledger::temporary`]).
    pub(crate) fn is_persistent(&self) -> bool {
        self.temporary.is_none()
    }

    /// Set the epsilon (and delta, 0 for pure DP only) releases of `account` may spend in all.
    /// A first budget and a lower one (not below what is spent) are set freely; a higher one
    /// only with `force`, and the raise is recorded.
    pub fn set_budget(&self, account: &Account, epsilon: f64, delta: f64, force: bool) -> Result<()> {
        const F: &str = "set_privacy_budget";
        let eps = epsilon_units(F, epsilon)?;
        let del = delta_units(F, delta, false)?;
        let table = &account.table;
        self.store.update(|state| {
            let t = totals(state, &account.fingerprint);
            if eps < t.spent.0 || del < t.spent.1 {
                return Err(AnonError::argument(
                    F,
                    "epsilon",
                    format!(
                        "table '{table}' has already spent epsilon {} and delta {} (anon_privacy_ledger); a budget of \
                         epsilon {} and delta {} would be below that",
                        shown(to_epsilon(t.spent.0)),
                        shown(to_delta(t.spent.1)),
                        shown(epsilon),
                        shown(delta),
                    ),
                ));
            }
            let event = match t.budget {
                None => Event::BudgetSet,
                Some(b) if b == (eps, del) => return Ok(((), false)),
                Some((e, d)) if eps > e || del > d => {
                    if !force {
                        return Err(AnonError::argument(
                            F,
                            "epsilon",
                            format!(
                                "raising the budget of table '{table}' (epsilon {} to {}, delta {} to {}) needs an \
                                 explicit force: SELECT * FROM set_privacy_budget('{table}', {}, 'force=true'); the raise \
                                 is recorded in anon_privacy_ledger",
                                shown(to_epsilon(e)),
                                shown(epsilon),
                                shown(to_delta(d)),
                                shown(delta),
                                shown(epsilon),
                            ),
                        ));
                    }
                    Event::BudgetRaised
                }
                Some(_) => Event::BudgetLowered,
            };
            let r = record(state, event, account, eps, del);
            state.records.push(r);
            Ok(((), true))
        })
    }

    /// Hold `charge` of `account`'s budget for a release in progress. Written to the file
    /// before the caller draws any noise; refused without a budget or past it.
    pub fn reserve(self: &Arc<Self>, function: &str, account: &Account, charge: Charge) -> Result<Reservation> {
        let held = |seq| Reservation {
            ledger: self.clone(),
            account: account.clone(),
            charge: charge.clone(),
            seq,
            open: true,
        };
        if charge.seeded {
            return Ok(held(None));
        }
        let seq = self.store.update(|state| {
            admit(state, function, account, &charge)?;
            let mut r = record(state, Event::Reserved, account, charge.epsilon, charge.delta);
            r.guarantee = charge.label();
            r.method = function.to_string();
            r.parts = format!("pid={}", std::process::id());
            let seq = r.seq;
            state.records.push(r);
            Ok((seq, true))
        })?;
        Ok(held(Some(seq)))
    }

    /// Whether [`Self::reserve`] would accept `charge` now, writing nothing: a call checks this
    /// before it reads any data, and reserves only once its data-dependent checks have passed.
    pub fn check(&self, function: &str, account: &Account, charge: &Charge) -> Result<()> {
        if charge.seeded {
            return Ok(());
        }
        admit(&self.store.read()?, function, account, charge)
    }

    /// Every record with its account's totals after it, in the order recorded.
    pub fn rows(&self) -> Result<Vec<LedgerRow>> {
        let state = self.store.read()?;
        let mut names: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for r in &state.records {
            let v = names.entry(&r.fingerprint).or_default();
            if !v.contains(&r.table.as_str()) {
                v.push(&r.table);
            }
        }
        let mut running: BTreeMap<&str, Totals> = BTreeMap::new();
        let mut out = Vec::with_capacity(state.records.len());
        for r in &state.records {
            let t = running.entry(&r.fingerprint).or_default();
            t.add(r);
            let mut seen = names[r.fingerprint.as_str()].clone();
            seen.sort_unstable();
            let text = |s: &str| (!s.is_empty()).then(|| s.to_string());
            let charge = !r.event.is_budget();
            out.push(LedgerRow {
                seq: r.seq,
                recorded_at_ms: r.at_ms,
                fingerprint: r.fingerprint.clone(),
                rows: r.rows,
                table: r.table.clone(),
                seen_as: seen.join(", "),
                event: match r.event {
                    Event::BudgetSet => "budget set",
                    Event::BudgetLowered => "budget lowered",
                    Event::BudgetRaised => "budget raised (force)",
                    Event::Reserved => "reserved (in progress, or interrupted: counted as spent)",
                    Event::Spent => "release",
                }
                .to_string(),
                guarantee: text(&r.guarantee),
                release: text(&r.release),
                method: text(&r.method),
                parts: text(&r.parts),
                epsilon: charge.then(|| to_epsilon(r.epsilon)),
                delta: charge.then(|| to_delta(r.delta)),
                budget: t.budget.map(|b| to_epsilon(b.0)),
                budget_delta: t.budget.map(|b| to_delta(b.1)),
                spent: to_epsilon(t.spent.0),
                spent_delta: to_delta(t.spent.1),
                remaining: t.budget.map(|b| to_epsilon(b.0.saturating_sub(t.spent.0))),
                remaining_delta: t.budget.map(|b| to_delta(b.1.saturating_sub(t.spent.1))),
            });
        }
        Ok(out)
    }
}

/// A charge held for a release in progress; dropped without [`Reservation::commit`] it is
/// removed from the file and spends nothing.
#[derive(Debug)]
pub struct Reservation {
    ledger: Arc<Ledger>,
    account: Account,
    charge: Charge,
    /// The reservation's record (`None`: a seeded call, which holds nothing).
    seq: Option<u64>,
    open: bool,
}

impl Reservation {
    /// The release is about to be published: record what it spent. Call it before registering
    /// the release, so a release is never visible without its charge.
    pub fn commit(mut self, release: &str, method: &str, parts: &str) -> Result<()> {
        let (account, charge, seq) = (&self.account, &self.charge, self.seq);
        self.ledger.store.update(|state| {
            let (eps, del) = if charge.seeded { (0, 0) } else { (charge.epsilon, charge.delta) };
            // The spend takes the reservation's place and number; without it (the file was
            // edited) it is appended, so the charge is never lost.
            let held = seq.and_then(|s| state.records.iter().position(|x| x.seq == s && x.event == Event::Reserved));
            let mut r = match held {
                Some(i) => record_numbered(state.records[i].seq, Event::Spent, account, eps, del),
                None => record(state, Event::Spent, account, eps, del),
            };
            r.guarantee = charge.label();
            r.release = release.to_string();
            r.method = method.to_string();
            r.parts = parts.to_string();
            match held {
                Some(i) => state.records[i] = r,
                None => state.records.push(r),
            }
            Ok(((), true))
        })?;
        self.open = false;
        Ok(())
    }
}

/// The checks a reservation must pass against the ledger's `state`: an epsilon in range, a
/// budget, a delta where one is charged, and room for the charge.
fn admit(state: &State, function: &str, account: &Account, charge: &Charge) -> Result<()> {
    let table = &account.table;
    if charge.epsilon == 0 || charge.epsilon > epsilon_units(function, MAX_EPSILON)? {
        return Err(AnonError::argument(function, "epsilon", format!("must be a number {}", limits())));
    }
    let t = totals(state, &account.fingerprint);
    let Some((eps, del)) = t.budget else {
        return Err(AnonError::argument(
            function,
            "epsilon",
            format!(
                "table '{table}' has no privacy budget; set one first, e.g. SELECT * FROM \
                     set_privacy_budget('{table}', 1.0) (add 'delta=1e-6' for (epsilon, delta) releases; \
                     anon_privacy_ledger lists budgets and spends)"
            ),
        ));
    };
    let after = (t.spent.0.saturating_add(charge.epsilon), t.spent.1.saturating_add(charge.delta));
    if charge.delta > 0 && del == 0 {
        return Err(AnonError::argument(
            function,
            "delta",
            format!(
                "table '{table}' has a budget for epsilon only, and this (epsilon, delta) release needs delta {}: \
                     allow a delta, e.g. SELECT * FROM set_privacy_budget('{table}', {}, 'delta=1e-6, force=true'), or \
                     ask for guarantee=pure",
                shown(to_delta(charge.delta)),
                shown(to_epsilon(eps)),
            ),
        ));
    }
    if after.0 > eps || after.1 > del {
        // The argument at fault: delta when only delta would overrun its budget.
        let at_fault = if after.0 > eps { "epsilon" } else { "delta" };
        return Err(AnonError::argument(
            function,
            at_fault,
            format!(
                "the privacy budget of table '{table}' would be exceeded: epsilon {} of {} and delta {} of {} \
                     spent, this release needs epsilon {} and delta {} (anon_privacy_ledger lists the releases; \
                     set_privacy_budget('{table}', epsilon, 'force=true') raises the budget)",
                shown(to_epsilon(t.spent.0)),
                shown(to_epsilon(eps)),
                shown(to_delta(t.spent.1)),
                shown(to_delta(del)),
                shown(to_epsilon(charge.epsilon)),
                shown(to_delta(charge.delta)),
            ),
        ));
    }
    Ok(())
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let (true, Some(seq)) = (self.open, self.seq) {
            // A failure leaves the reservation in the file, counted as spent: the safe side.
            let _ = self.ledger.store.update(|state| {
                let before = state.records.len();
                state.records.retain(|r| !(r.seq == seq && r.event == Event::Reserved));
                Ok(((), state.records.len() != before))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(fp: &str, table: &str) -> Account {
        Account { fingerprint: fp.into(), rows: 10, table: table.into() }
    }

    fn ledger() -> Arc<Ledger> {
        Arc::new(Ledger::temporary())
    }

    fn spend(l: &Arc<Ledger>, a: &Account, eps: f64) -> Result<()> {
        l.reserve("f", a, Charge::epsilon(grid_units(eps)))?.commit("r", "m", "")
    }

    #[test]
    fn spends_add_exactly_on_the_grid() {
        let l = ledger();
        let t = account("a", "t");
        l.set_budget(&t, 1.0, 0.0, false).unwrap();
        for e in [0.1, 0.2, 0.7] {
            spend(&l, &t, e).unwrap();
        }
        assert!(spend(&l, &t, 2f64.powi(-30)).is_err(), "the budget is used up");
        let rows = l.rows().unwrap();
        assert_eq!(rows.len(), 4);
        assert!(rows[3].spent <= 1.0 && rows[3].remaining.unwrap() >= 0.0);
    }

    #[test]
    fn a_dropped_reservation_spends_nothing_and_a_refusal_says_why() {
        let l = ledger();
        let t = account("a", "t");
        l.set_budget(&t, 1.0, 0.0, false).unwrap();
        drop(l.reserve("f", &t, Charge::epsilon(grid_units(0.8))).unwrap());
        let held = l.reserve("f", &t, Charge::epsilon(grid_units(0.8))).unwrap();
        assert!(l.rows().unwrap()[1].event.starts_with("reserved"));
        let e = spend(&l, &t, 0.5).unwrap_err().to_string();
        assert!(e.contains("budget of table 't' would be exceeded") && e.contains("'force=true'"), "{e}");
        held.commit("r", "m", "").unwrap();
        let rows = l.rows().unwrap();
        assert_eq!((rows.len(), rows[1].event.as_str(), rows[1].seq), (2, "release", 3), "{rows:?}");
        assert!(l.set_budget(&t, 0.5, 0.0, false).unwrap_err().to_string().contains("already spent"));
    }

    #[test]
    fn without_a_budget_a_release_is_refused_and_told_how_to_set_one() {
        let l = ledger();
        let e = spend(&l, &account("a", "nps"), 0.5).unwrap_err().to_string();
        assert!(e.contains("SELECT * FROM set_privacy_budget('nps', 1.0)"), "{e}");
        assert!(l.rows().unwrap().is_empty() && !l.path().exists(), "nothing written");
    }

    #[test]
    fn a_budget_is_lowered_freely_and_raised_only_with_force() {
        let l = ledger();
        let t = account("a", "t");
        l.set_budget(&t, 2.0, 0.0, false).unwrap();
        l.set_budget(&t, 1.0, 0.0, false).unwrap();
        let e = l.set_budget(&t, 3.0, 0.0, false).unwrap_err().to_string();
        assert!(e.contains("set_privacy_budget('t', 3, 'force=true')"), "{e}");
        assert!(l.set_budget(&t, 1.0, 1e-6, false).is_err(), "a delta raise needs force too");
        l.set_budget(&t, 3.0, 0.0, true).unwrap();
        let events: Vec<String> = l.rows().unwrap().into_iter().map(|r| r.event).collect();
        assert_eq!(events, ["budget set", "budget lowered", "budget raised (force)"]);
    }

    #[test]
    fn delta_is_budgeted_and_charged_rounded_against_the_release() {
        let l = ledger();
        let t = account("a", "t");
        l.set_budget(&t, 5.0, 1e-6, false).unwrap();
        let c = |d: f64| Charge::epsilon(grid_units(1.0)).with_delta("f", d).unwrap();
        l.reserve("f", &t, c(6e-7)).unwrap().commit("r1", "m", "").unwrap();
        let e = l.reserve("f", &t, c(6e-7)).unwrap_err().to_string();
        assert!(e.contains("delta"), "{e}");
        assert!(l.reserve("f", &account("b", "u"), c(0.0)).is_err(), "no budget elsewhere");
        let last = l.rows().unwrap().pop().unwrap();
        assert!(last.spent_delta >= 6e-7 && last.spent_delta < 6e-7 * (1.0 + 1e-12));
        assert_eq!(last.guarantee.as_deref(), Some("(epsilon, delta)-DP"));
        // Rounding: a charge up, a budget down; exact where the double is on the grid.
        assert_eq!(delta_units("f", 0.5, true).unwrap(), 1 << 63);
        assert_eq!(delta_units("f", 1e-300, true).unwrap(), 1);
        assert_eq!(delta_units("f", 1e-300, false).unwrap(), 0);
        // 1/3 as a double is m * 2^-54: exact on the grid; 1e-10 is m * 2^-86: not.
        assert_eq!(delta_units("f", 1.0 / 3.0, true).unwrap(), delta_units("f", 1.0 / 3.0, false).unwrap());
        assert_eq!(delta_units("f", 1e-10, true).unwrap(), delta_units("f", 1e-10, false).unwrap() + 1);
        for bad in [-1e-9, 1.0, f64::NAN] {
            assert!(Charge::epsilon(1).with_delta("f", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn epsilon_outside_the_grid_is_refused_with_the_limits() {
        let l = ledger();
        let t = account("a", "t");
        for bad in [1e308, 1e-300, 0.0, -1.0, f64::INFINITY, f64::NAN, 2e6] {
            let e = l.set_budget(&t, bad, 0.0, false).unwrap_err().to_string();
            assert!(e.contains("2^-32 (2.32830644e-10) and 2^20 (1048576)") && e.len() < 300, "{e}");
        }
        l.set_budget(&t, MAX_EPSILON, 0.0, false).unwrap();
        for units in [0, grid_units(1e308)] {
            assert!(l.reserve("f", &t, Charge::epsilon(units)).unwrap_err().to_string().contains("2^20"));
        }
    }

    #[test]
    fn a_seeded_call_needs_no_budget_spends_nothing_and_is_listed_as_not_private() {
        let l = ledger();
        let t = account("a", "t");
        l.reserve("f", &t, Charge::epsilon(grid_units(3.0)).seeded(true)).unwrap().commit("r", "m", "x=3").unwrap();
        drop(l.reserve("f", &t, Charge::epsilon(grid_units(3.0)).seeded(true)).unwrap());
        let rows = l.rows().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].guarantee.as_deref(), rows[0].epsilon, rows[0].spent), (Some(SEEDED), Some(0.0), 0.0));
    }

    #[test]
    fn accounts_follow_the_fingerprint_and_list_every_name() {
        let l = ledger();
        l.set_budget(&account("a", "nps"), 1.0, 0.0, false).unwrap();
        spend(&l, &account("a", "nps_copy"), 0.75).unwrap();
        assert!(spend(&l, &account("a", "renamed"), 0.5).is_err(), "a copy shares the budget");
        spend(&l, &account("b", "other"), 0.5).unwrap_err();
        let rows = l.rows().unwrap();
        assert_eq!(rows[1].seen_as, "nps, nps_copy");
    }

    #[test]
    fn a_second_ledger_on_the_same_file_sees_the_spend() {
        let first = ledger();
        let t = account("a", "t");
        first.set_budget(&t, 1.0, 0.0, false).unwrap();
        spend(&first, &t, 0.75).unwrap();
        let again = Arc::new(Ledger::open(first.path()));
        assert!(spend(&again, &t, 0.5).is_err());
        spend(&again, &t, 0.25).unwrap();
        assert_eq!(first.rows().unwrap().last().unwrap().remaining, Some(0.0));
    }

    /// The audit's case: a budget of 1, 0.9 spent, and the file cut back to its first lines
    /// (`head -n`) by something other than anonfusion. Before the end line, `head -3` let a
    /// second 0.9 through and `head -2` read as an empty ledger that took a new budget.
    #[test]
    fn a_ledger_cut_at_a_line_boundary_is_refused_not_reset() {
        let l = ledger();
        let t = account("a", "t");
        l.set_budget(&t, 1.0, 0.0, false).unwrap();
        spend(&l, &t, 0.9).unwrap();
        let whole = std::fs::read_to_string(l.path()).unwrap();
        let lines: Vec<&str> = whole.split_inclusive('\n').collect();
        for keep in 0..lines.len() {
            std::fs::write(l.path(), lines[..keep].concat()).unwrap();
            let shown = l.path().display().to_string();
            for e in
                [spend(&l, &t, 0.9).unwrap_err(), l.set_budget(&t, 5.0, 0.0, false).unwrap_err(), l.rows().unwrap_err()]
            {
                let e = e.to_string();
                let why = if keep == 0 { "empty file" } else { "is incomplete" };
                assert!(e.contains(&shown) && e.contains(why), "first {keep} lines: {e}");
            }
        }
        std::fs::write(l.path(), &whole).unwrap();
        assert!(spend(&l, &t, 0.9).unwrap_err().to_string().contains("would be exceeded"));
        spend(&l, &t, 0.1).unwrap();
    }

    #[test]
    fn a_temporary_ledger_is_removed_with_its_session() {
        let l = ledger();
        l.set_budget(&account("a", "t"), 1.0, 0.0, false).unwrap();
        let dir = l.path().parent().unwrap().to_path_buf();
        assert!(dir.exists() && !l.is_persistent());
        drop(l);
        assert!(!dir.exists());
    }

    #[test]
    fn messages_never_print_hundreds_of_digits() {
        assert_eq!(shown(1e-300), "1e-300");
        assert_eq!(shown(0.25), "0.25");
        assert_eq!(shown(1048576.0), "1048576");
        assert_eq!(shown(to_epsilon(grid_units(0.6))), "0.6");
        assert_eq!(shown(MIN_EPSILON), "2.32830644e-10");
        assert_eq!(shown(-1.5e-7), "-1.5e-7");
    }
}
