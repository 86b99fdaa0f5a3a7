//! The engine's errors as Python exceptions. The classes live in Python (`anonfusion._errors`,
//! shown and pickled as `anonfusion.<Class>`), so an error raised in a process pool or joblib
//! worker arrives in the parent as itself; this module only picks the class.

use anonfusion::datafusion::error::DataFusionError;
use anonfusion::error::{AnonError, describe};
use pyo3::PyErr;

pyo3::import_exception!(anonfusion._errors, Error);
pyo3::import_exception!(anonfusion._errors, ArgumentError);
pyo3::import_exception!(anonfusion._errors, TableError);
pyo3::import_exception!(anonfusion._errors, BudgetError);
pyo3::import_exception!(anonfusion._errors, Cancelled);

/// The engine's message for a DataFusion error, as the `anonfusion` exception of its kind.
pub(crate) fn engine_error(e: DataFusionError) -> PyErr {
    let message = describe(&e);
    let ours = match e.find_root() {
        DataFusionError::External(inner) => inner.downcast_ref::<AnonError>(),
        _ => None,
    };
    match ours {
        // Both say so in their message: after noise was drawn, the charge stands.
        Some(AnonError::Cancelled | AnonError::CancelledAfterNoise) => Cancelled::new_err(message),
        Some(AnonError::Argument { argument, message: why, .. }) if is_budget_refusal(argument, why) => {
            BudgetError::new_err(message)
        }
        Some(AnonError::Argument { .. }) => ArgumentError::new_err(message),
        Some(AnonError::Table { .. } | AnonError::Column { .. } | AnonError::Hierarchy { .. }) => {
            TableError::new_err(message)
        }
        _ => Error::new_err(message),
    }
}

/// A privacy-budget refusal: the ledger reports them as errors of the `epsilon` or `delta`
/// argument that speak of the table's budget ("has no privacy budget", "would be exceeded",
/// "has a budget for epsilon only", a budget below what is spent). An epsilon that is out of
/// range is a bad argument, not a refusal, and never mentions a budget.
fn is_budget_refusal(argument: &str, message: &str) -> bool {
    matches!(argument, "epsilon" | "delta") && message.contains("budget")
}
