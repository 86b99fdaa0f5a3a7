//! What each table function is for, beside its signature, for the CLI's `\df` and for
//! embedders. Signatures stay with the function (its argument errors show them); the purpose
//! line is here, and a test checks that every function the session registers is listed.

use super::method::MethodSpec;
use super::{
    artuc_fn, constraints_fn, dataset, entropy_fn, explore, generalize, hceil_fn, hierarchies, ipa_fn, kanon_fn,
    ledger_fn, metrics_fn, plan_fn, query_error_fn, records_fn, risk_fn, rmr_fn, roles, synth_fn, truthful_fn,
    verify_fn,
};
use crate::methods::options::Options;

/// One table function: its SQL name, usage line, one-line purpose and, when it takes an
/// options string, their declaration.
#[derive(Debug, Clone, Copy)]
pub struct FunctionDoc {
    pub name: &'static str,
    /// The usage line; an `options` placeholder stands for the options string ([`Self::usage`]).
    pub signature: &'static str,
    pub purpose: &'static str,
    options: Option<&'static Options>,
}

const fn doc(name: &'static str, signature: &'static str, purpose: &'static str) -> FunctionDoc {
    FunctionDoc { name, signature, purpose, options: None }
}

/// A function whose options string `options` declares.
const fn with_options(
    name: &'static str,
    signature: &'static str,
    options: &'static Options,
    purpose: &'static str,
) -> FunctionDoc {
    FunctionDoc { name, signature, purpose, options: Some(options) }
}

const fn method<S: MethodSpec>(purpose: &'static str) -> FunctionDoc {
    FunctionDoc { name: S::NAME, signature: S::SIGNATURE, purpose, options: S::OPTIONS }
}

impl FunctionDoc {
    /// The usage line with the options filled in from their declaration.
    pub fn usage(&self) -> String {
        Options::usage_of(self.signature, self.options)
    }

    /// One line per declared option: name, values, default and what it does.
    pub fn option_lines(&self) -> Vec<String> {
        self.options.map(Options::doc_lines).unwrap_or_default()
    }
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
    with_options(
        "declare_release_plan",
        plan_fn::SIGNATURE,
        &plan_fn::OPTIONS,
        "declare the public plan ipa_release uses on a table (an adaptive partition)",
    ),
    with_options(
        "load_hierarchy",
        hierarchies::LOAD_SIG,
        &hierarchies::LOAD_OPTIONS,
        "attach a generalization hierarchy from an ARX-format file",
    ),
    doc("hierarchy_from_table", hierarchies::FROM_TABLE_SIG, "attach a generalization hierarchy from a table"),
    doc("interval_hierarchy", hierarchies::INTERVALS_SIG, "attach numeric bands as a column's hierarchy"),
    with_options(
        "flat_hierarchy",
        hierarchies::FLAT_SIG,
        &hierarchies::FLAT_OPTIONS,
        "attach a one-level hierarchy: every value under *",
    ),
    with_options(
        "masking_hierarchy",
        hierarchies::MASKING_SIG,
        &hierarchies::MASKING_OPTIONS,
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
    with_options(
        "set_privacy_budget",
        ledger_fn::SIGNATURE,
        &ledger_fn::OPTIONS,
        "set the epsilon (and delta) a table's DP releases may spend",
    ),
    doc("truthful_view", truthful_fn::SIGNATURE, "a counterfeit release without its counterfeit records"),
    doc("verify_release", verify_fn::SIGNATURE, "check a release against its privacy claims, one row per check"),
    with_options(
        "risk_report",
        risk_fn::SIGNATURE,
        &crate::risk::report::OPTIONS,
        "re-identification risk of a table or a release, one row per measure",
    ),
    with_options(
        "anon_metrics",
        metrics_fn::METRICS_SIG,
        &crate::metrics::read::METRICS_OPTIONS,
        "every information-loss metric that applies to a release",
    ),
    with_options(
        "metric_value",
        metrics_fn::VALUE_SIG,
        &crate::metrics::read::VALUE_OPTIONS,
        "one information-loss metric of a release",
    ),
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
    use crate::methods::options::{Kind, OptionSpec};

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

    /// A value of `spec`'s kind outside what it accepts, when its declaration alone rules it out.
    fn out_of_range(spec: &OptionSpec) -> Option<String> {
        Some(match spec.kind {
            Kind::Int { min, .. } if min > 0 => (min - 1).to_string(),
            Kind::Int { max, .. } if max < u64::MAX => (max as u128 + 1).to_string(),
            Kind::Int { .. } | Kind::Seed => "-7".into(),
            Kind::Float { min, .. } if min.is_finite() => (min - 0.5).to_string(),
            Kind::Float { max, .. } => (max + 0.5).to_string(),
            Kind::Percent { .. } => "100.5%".into(),
            Kind::Flag => "maybe".into(),
            // A declared domain may hold a patient's value: the error must not repeat it.
            Kind::List => "Smith|Smith".into(),
            Kind::Choice(_) | Kind::Text(_) | Kind::Removed(_) => return None,
        })
    }

    /// Every declared option of every function is in its usage line and its `\df` lines, and
    /// the parser made from the declaration refuses an unknown key (listing every option) and a
    /// value out of range (naming the option, never echoing the value).
    #[test]
    fn every_declared_option_is_documented_and_checked() {
        let declared: Vec<_> = TABLE_FUNCTIONS.iter().filter_map(|d| d.options.map(|o| (d, o))).collect();
        assert!(declared.len() >= 17, "{} functions declare options", declared.len());
        let mut checked = 0;
        for (d, options) in declared {
            assert_eq!(options.function, d.name);
            let (usage, lines) = (d.usage(), d.option_lines());
            assert!(!usage.contains("options"), "{}: the usage line keeps its placeholder: {usage}", d.name);
            let shown: Vec<_> = options.specs.iter().filter(|s| !matches!(s.kind, Kind::Removed(_))).collect();
            assert_eq!(lines.len(), shown.len(), "{}", d.name);
            for spec in &shown {
                assert!(usage.contains(&format!("{}=", spec.name)), "{}: {} not in {usage}", d.name, spec.name);
                assert!(lines.iter().any(|l| l.starts_with(&format!("{}: ", spec.name))), "{}: {}", d.name, spec.name);
                assert!(!spec.doc.is_empty(), "{}: {} has no doc", d.name, spec.name);
            }
            let e = options.parse("no_such_option=1").unwrap_err().to_string();
            assert!(e.contains("unknown option 'no_such_option'"), "{e}");
            assert!(shown.iter().all(|s| e.contains(s.name)), "{}: {e}", d.name);
            for spec in options.specs {
                let Some(bad) = out_of_range(spec) else { continue };
                let e = options.parse(&format!("{}={bad}", spec.name)).unwrap_err().to_string();
                assert!(e.contains(&format!("argument '{}'", spec.name)), "{}: {e}", d.name);
                assert!(
                    !e.contains(&format!("'{bad}'")) && !e.contains("Smith"),
                    "{}: the value is echoed: {e}",
                    d.name
                );
                checked += 1;
            }
        }
        assert!(checked >= 50, "{checked} options checked out of range");
    }
}
