//! The privacy budget of each source table: what every differentially private release of it
//! spent, and the total its owner allows.
//!
//! Epsilons compose by addition (sequential composition), so a table's budget is a sum. Amounts
//! are kept as integers on the grid the samplers use (multiples of 2^-32): a release is charged
//! the epsilon its noise is actually calibrated to, floor(epsilon · 2^32) / 2^32 per part, so
//! sums are exact and 0.1 + 0.2 + 0.7 fits a budget of 1.
//!
//! A release first *reserves* its epsilon (refused if spent + reserved + epsilon would pass the
//! budget), draws its noise, and *commits* once its tables are built; a failed release drops the
//! reservation and spends nothing. Reserving before any noise is drawn is what makes the refusal
//! safe: a refused release has looked at nothing.

use super::EPSILON_GRID_BITS;
use crate::error::{AnonError, Result};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Grid units per unit of epsilon.
const UNIT: f64 = (1u64 << EPSILON_GRID_BITS) as f64;

/// An epsilon on the samplers' grid, rounded down by the samplers' own rounding
/// ([`super::epsilon_numerator`]); 0 for an epsilon they would refuse.
pub fn grid_units(epsilon: f64) -> u64 {
    super::epsilon_numerator("ledger", epsilon).unwrap_or(0)
}

fn to_epsilon(units: u64) -> f64 {
    units as f64 / UNIT
}

/// One release's charge.
#[derive(Debug, Clone, PartialEq)]
pub struct Spend {
    pub release: String,
    pub method: String,
    /// The epsilon charged (the grid value the noise is calibrated to).
    pub epsilon: f64,
    /// How it was split, for the owner to read (`suppression=0.1, insertion=0.3, ...`).
    pub parts: String,
    pub recorded_at_ms: i64,
}

#[derive(Debug, Default)]
struct Account {
    /// Grid units the owner allows; `None`: no limit set (spends are still recorded).
    budget: Option<u64>,
    spent: u64,
    reserved: u64,
    spends: Vec<(Spend, u64)>,
}

/// Budgets and spends of every table of a session.
#[derive(Debug, Default)]
pub struct Ledger {
    accounts: Mutex<BTreeMap<String, Account>>,
}

/// One row of the ledger as a table.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRow {
    pub table: String,
    pub budget: Option<f64>,
    pub spent: f64,
    pub remaining: Option<f64>,
    /// `None` for a table with a budget and no release yet.
    pub spend: Option<Spend>,
}

impl Ledger {
    /// Set the total epsilon releases of `table` may spend; refused below what is already spent.
    pub fn set_budget(&self, table: &str, epsilon: f64) -> Result<()> {
        const F: &str = "set_privacy_budget";
        if !epsilon.is_finite() || epsilon <= 0.0 {
            return Err(AnonError::argument(F, "epsilon", format!("must be a finite number > 0, got {epsilon}")));
        }
        let mut accounts = self.accounts.lock().expect("ledger lock");
        let account = accounts.entry(table.to_string()).or_default();
        let units = grid_units(epsilon);
        if units < account.spent + account.reserved {
            return Err(AnonError::argument(
                F,
                "epsilon",
                format!(
                    "table '{table}' has already spent {} of its budget; a total of {epsilon} would be exceeded",
                    to_epsilon(account.spent + account.reserved)
                ),
            ));
        }
        account.budget = Some(units);
        Ok(())
    }

    /// Reserve `epsilon` (already on the grid: the sum of the parts' grid values) of `table`'s
    /// budget for a release in progress.
    pub fn reserve(&self, function: &str, table: &str, epsilon_units: u64) -> Result<Reservation<'_>> {
        let mut accounts = self.accounts.lock().expect("ledger lock");
        let account = accounts.entry(table.to_string()).or_default();
        if let Some(budget) = account.budget {
            let after = account.spent + account.reserved + epsilon_units;
            if after > budget {
                return Err(AnonError::argument(
                    function,
                    "epsilon",
                    format!(
                        "the privacy budget of table '{table}' would be exceeded: {:.6} of {:.6} spent, this release \
                         needs {:.6} (set_privacy_budget raises it; anon_privacy_ledger lists the releases)",
                        to_epsilon(account.spent + account.reserved),
                        to_epsilon(budget),
                        to_epsilon(epsilon_units)
                    ),
                ));
            }
        }
        account.reserved += epsilon_units;
        Ok(Reservation { ledger: self, table: table.to_string(), units: epsilon_units, open: true })
    }

    /// Every spend, and every budgeted table without one, in table order.
    pub fn rows(&self) -> Vec<LedgerRow> {
        let accounts = self.accounts.lock().expect("ledger lock");
        let mut out = Vec::new();
        for (table, a) in accounts.iter() {
            let budget = a.budget.map(to_epsilon);
            if a.spends.is_empty() && a.budget.is_some() {
                out.push(LedgerRow { table: table.clone(), budget, spent: 0.0, remaining: budget, spend: None });
            }
            let mut running = 0u64;
            for (s, units) in &a.spends {
                running += units;
                out.push(LedgerRow {
                    table: table.clone(),
                    budget,
                    spent: to_epsilon(running),
                    remaining: a.budget.map(|b| to_epsilon(b.saturating_sub(running))),
                    spend: Some(s.clone()),
                });
            }
        }
        out
    }
}

/// Epsilon held for a release in progress; dropped without [`Reservation::commit`] it is
/// returned to the budget.
#[derive(Debug)]
pub struct Reservation<'a> {
    ledger: &'a Ledger,
    table: String,
    units: u64,
    open: bool,
}

impl Reservation<'_> {
    /// The release is published: record what it spent.
    pub fn commit(mut self, release: &str, method: &str, parts: &str) {
        let mut accounts = self.ledger.accounts.lock().expect("ledger lock");
        let a = accounts.entry(self.table.clone()).or_default();
        a.reserved -= self.units;
        a.spent += self.units;
        let at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        let spend = Spend {
            release: release.to_string(),
            method: method.to_string(),
            epsilon: to_epsilon(self.units),
            parts: parts.to_string(),
            recorded_at_ms: at,
        };
        a.spends.push((spend, self.units));
        self.open = false;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.open
            && let Ok(mut accounts) = self.ledger.accounts.lock()
            && let Some(a) = accounts.get_mut(&self.table)
        {
            a.reserved -= self.units;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spends_add_exactly_on_the_grid() {
        let l = Ledger::default();
        l.set_budget("t", 1.0).unwrap();
        for e in [0.1, 0.2, 0.7] {
            l.reserve("f", "t", grid_units(e)).unwrap().commit("r", "m", "");
        }
        assert!(l.reserve("f", "t", grid_units(2f64.powi(-30))).is_err(), "the budget is used up");
        let rows = l.rows();
        assert_eq!(rows.len(), 3);
        assert!(rows[2].spent <= 1.0 && rows[2].remaining.unwrap() >= 0.0);
    }

    #[test]
    fn a_dropped_reservation_spends_nothing_and_a_refusal_says_why() {
        let l = Ledger::default();
        l.set_budget("t", 1.0).unwrap();
        drop(l.reserve("f", "t", grid_units(0.8)).unwrap());
        let held = l.reserve("f", "t", grid_units(0.8)).unwrap();
        let e = l.reserve("f", "t", grid_units(0.5)).unwrap_err().to_string();
        assert!(e.contains("budget of table 't' would be exceeded"), "{e}");
        held.commit("r", "m", "");
        assert!(l.set_budget("t", 0.5).is_err(), "below what is spent");
        assert!(l.set_budget("t", 2.0).is_ok());
    }

    #[test]
    fn without_a_budget_spends_are_recorded_not_refused() {
        let l = Ledger::default();
        l.reserve("f", "u", grid_units(5.0)).unwrap().commit("r", "m", "x=5");
        let rows = l.rows();
        assert_eq!((rows.len(), rows[0].budget, rows[0].spent), (1, None, 5.0));
    }
}
