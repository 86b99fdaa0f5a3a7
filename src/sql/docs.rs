//! What each table function is for, beside its signature, for the CLI's `\df` and for
//! embedders. Signatures stay with the function (its argument errors show them); the purpose
//! line is here, and a test checks that every function the session registers is listed.

use super::method::MethodSpec;
use super::{
    artuc_fn, constraints_fn, dataset, entropy_fn, explore, generalize, hceil_fn, hierarchies, ipa_fn, kanon_fn,
    ledger_fn, metrics_fn, plan_fn, query_error_fn, records_fn, risk_fn, rmr_fn, roles, synth_fn, truthful_fn,
    verify_fn,
};

/// One table function: its SQL name, usage line and one-line purpose.
#[derive(Debug, Clone, Copy)]
pub struct FunctionDoc {
    pub name: &'static str,
    pub signature: &'static str,
    pub purpose: &'static str,
}

const fn doc(name: &'static str, signature: &'static str, purpose: &'static str) -> FunctionDoc {
    FunctionDoc { name, signature, purpose }
}

const fn method<S: MethodSpec>(purpose: &'static str) -> FunctionDoc {
    doc(S::NAME, S::SIGNATURE, purpose)
}

/// Every table function of a session, in the order a custodian meets them.
pub const TABLE_FUNCTIONS: &[FunctionDoc] = &[
    doc("load_dataset", dataset::SIGNATURE, "register a bundled dataset with its roles and hierarchies"),
    doc("load_constraints", constraints_fn::SIGNATURE, "register one of the ArtUC paper's utility-constraint sets"),
    doc(
        "utility_constraints",
        constraints_fn::BUILD_SIGNATURE,
        "register ArtUC utility constraints for your table: demographic bands x code sets",
    ),
    doc("declare_roles", roles::SIGNATURE, "declare each column's role (identifier, quasi-identifier, sensitive, ...)"),
    doc(
        "declare_release_plan",
        plan_fn::SIGNATURE,
        "declare the public plan ipa_release uses on a table (an adaptive partition)",
    ),
    doc("load_hierarchy", hierarchies::LOAD_SIG, "attach a generalization hierarchy from an ARX-format file"),
    doc("hierarchy_from_table", hierarchies::FROM_TABLE_SIG, "attach a generalization hierarchy from a table"),
    doc("interval_hierarchy", hierarchies::INTERVALS_SIG, "attach numeric bands as a column's hierarchy"),
    doc("flat_hierarchy", hierarchies::FLAT_SIG, "attach a one-level hierarchy: every value under *"),
    doc(
        "masking_hierarchy",
        hierarchies::MASKING_SIG,
        "attach a character-masking hierarchy (02139 -> 0213* -> ... -> *)",
    ),
    doc("date_hierarchy", hierarchies::DATES_SIG, "attach day -> month -> year -> decade -> * to a date column"),
    doc("hierarchy", hierarchies::SHOW_SIG, "a column's hierarchy, one row per leaf (ARX shape)"),
    doc("hierarchy_nodes", hierarchies::NODES_SIG, "a column's hierarchy, one row per node with leaves and degree"),
    doc("lattice_nodes", explore::SIGNATURE, "every node of a table's generalization lattice with its classes"),
    method::<generalize::Generalize>("release a table generalized at a lattice node chosen by hand"),
    method::<kanon_fn::Kanon>("optimal full-domain k-anonymity (with l-diversity, t-closeness)"),
    method::<hceil_fn::Hceil>("k-anonymity under an h-ceiling with counterfeits and their catalog"),
    method::<entropy_fn::Entropy>("k-anonymous Q-blocks clustered by conditional entropy"),
    method::<artuc_fn::Artuc>("(k,k^m)-anonymity of demographics and code sets under utility constraints"),
    method::<rmr_fn::Rmr>("RmR, ArtUC's baseline: (k,k^m)-anonymity with NCP <= delta, no utility constraints"),
    method::<ipa_fn::Ipa>("differentially private microdata (IPA), charged to the privacy ledger"),
    method::<ipa_fn::Histogram>("a differentially private histogram at one lattice node"),
    method::<synth_fn::Synthesize>(
        "differentially private synthetic records from a private tree of noisy marginals (MST), charged to the ledger",
    ),
    doc("set_privacy_budget", ledger_fn::SIGNATURE, "set the epsilon (and delta) a table's DP releases may spend"),
    doc("truthful_view", truthful_fn::SIGNATURE, "a counterfeit release without its counterfeit records"),
    doc("verify_release", verify_fn::SIGNATURE, "check a release against its privacy claims, one row per check"),
    doc("risk_report", risk_fn::SIGNATURE, "re-identification risk of a table or a release, one row per measure"),
    doc("anon_metrics", metrics_fn::METRICS_SIG, "every information-loss metric that applies to a release"),
    doc("metric_value", metrics_fn::VALUE_SIG, "one information-loss metric of a release"),
    doc("query_error", query_error_fn::QUERY_ERROR_SIG, "a query's answer on the original next to its estimate"),
    doc("workload_queries", query_error_fn::WORKLOAD_QUERIES_SIG, "a random workload of count queries"),
    doc("workload_error", query_error_fn::WORKLOAD_ERROR_SIG, "the error of a release over a random workload"),
    method::<records_fn::AsRecords>("a generalized release as plain records, leaves drawn as the harness reads it"),
    // DataFusion's own.
    doc(
        "generate_series",
        "generate_series(start, stop [, step])",
        "DataFusion: the values from start to stop, stop included",
    ),
    doc("range", "range(start, stop [, step])", "DataFusion: the values from start to stop, stop excluded"),
];

#[cfg(test)]
mod tests {
    use super::TABLE_FUNCTIONS;

    #[test]
    fn every_registered_function_is_listed_once() {
        let ctx = crate::new_session();
        let mut registered: Vec<String> = ctx.state().table_functions().keys().cloned().collect();
        registered.sort();
        let mut listed: Vec<String> = TABLE_FUNCTIONS.iter().map(|d| d.name.to_string()).collect();
        listed.sort();
        assert_eq!(listed, registered);
        for d in TABLE_FUNCTIONS {
            assert!(d.signature.starts_with(&format!("{}(", d.name)), "{}: {}", d.name, d.signature);
        }
    }
}
