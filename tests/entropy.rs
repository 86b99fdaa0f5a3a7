//! entropy_anonymize: the paper's Table 1 worked by hand (distances d_{1,2} … d_{1,9} and the
//! Q-blocks they make), the SQL surface, and bad input.

mod common;

use anonfusion::encode::{FrequencyTable, frequency_table};
use anonfusion::methods::entropy::{Clusterer, State};
use common::{err, int, rows, texts};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;

/// Table 1 (index, Work, Country, Disease).
const TABLE1: [(&str, &str, &str); 9] = [
    ("Private", "USA", "Heart Disease"),
    ("State-gov", "Mexico", "Cancer"),
    ("Local-gov", "Brazil", "Cancer"),
    ("Federal-gov", "USA", "Flu"),
    ("Private", "Canada", "Heart Disease"),
    ("Self-emp-not-inc", "Canada", "Heart Disease"),
    ("Self-emp-inc", "USA", "Flu"),
    ("Private", "USA", "Heart Disease"),
    ("State-gov", "Mexico", "Flu"),
];

/// Table 1 with the hierarchies of Tables 2–4: Work → {Private-sector, Government,
/// Self-employed} → Workclass; Country → {North (USA, Canada), South (Mexico, Brazil)} →
/// America (the paper's Table 2 puts Mexico in South).
async fn table1() -> SessionContext {
    table1_with_registry().await.0
}

async fn table1_with_registry() -> (SessionContext, std::sync::Arc<anonfusion::Registry>) {
    let (ctx, registry) = anonfusion::session();
    let values: Vec<String> = TABLE1.iter().map(|(w, c, d)| format!("('{w}', '{c}', '{d}')")).collect();
    rows(
        &ctx,
        &format!("CREATE TABLE t1 (work VARCHAR, country VARCHAR, disease VARCHAR) AS VALUES {}", values.join(", ")),
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('t1', 'work=qi, country=qi, disease=sensitive')").await;
    rows(
        &ctx,
        "CREATE TABLE workh (leaf VARCHAR, l1 VARCHAR, l2 VARCHAR) AS VALUES \
         ('Private', 'Private-sector', 'Workclass'), ('State-gov', 'Government', 'Workclass'), \
         ('Local-gov', 'Government', 'Workclass'), ('Federal-gov', 'Government', 'Workclass'), \
         ('Self-emp-not-inc', 'Self-employed', 'Workclass'), ('Self-emp-inc', 'Self-employed', 'Workclass')",
    )
    .await;
    rows(
        &ctx,
        "CREATE TABLE countryh (leaf VARCHAR, l1 VARCHAR, l2 VARCHAR) AS VALUES \
         ('USA', 'North', 'America'), ('Canada', 'North', 'America'), \
         ('Mexico', 'South', 'America'), ('Brazil', 'South', 'America')",
    )
    .await;
    rows(&ctx, "SELECT * FROM hierarchy_from_table('t1', 'work', 'workh')").await;
    rows(&ctx, "SELECT * FROM hierarchy_from_table('t1', 'country', 'countryh')").await;
    (ctx, registry)
}

async fn table1_ft() -> FrequencyTable {
    let (ctx, registry) = table1_with_registry().await;
    let meta = registry.require("t1").unwrap();
    frequency_table(&ctx, "t1", &meta, Some("disease")).await.unwrap()
}

/// The frequency-table row of Table 1's record `i` (1-based).
fn row_of(ft: &FrequencyTable, i: usize) -> usize {
    let (w, c, d) = TABLE1[i - 1];
    let (hw, hc) = (&ft.qis[0].hierarchy, &ft.qis[1].hierarchy);
    let s = ft.sensitive.as_ref().unwrap();
    (0..ft.len())
        .find(|&r| {
            hw.label(0, ft.qis[0].codes[r]) == w
                && hc.label(0, ft.qis[1].codes[r]) == c
                && s.values[s.codes[r] as usize] == d
        })
        .unwrap()
}

/// H(Z) of Table 1's diseases: 4 Heart Disease, 2 Cancer, 3 Flu of 9.
fn h_z() -> f64 {
    [4.0f64, 2.0, 3.0].iter().map(|c| -(c / 9.0) * (c / 9.0).log2()).sum()
}

/// d_{1,j} by hand (Eq. 8 on Table 4's table). Before any generalization H(X|Y) = 0 and the
/// only tuple with mixed diseases is (State-gov, Mexico), so I(Y;Z) = H(Z) − 2/9 = I0.
/// - j = 8: the same record again; nothing changes: d = I0.
/// - j = 4, 7: one attribute goes to a new label holding two values (+2/9 to H); the pair's
///   tuple mixes Heart Disease with Flu (+2/9 to H(Z|Y), −2/9 to I): d = I0.
/// - j = 5: Country to North (+2/9), two Heart Disease records (I unchanged): d = H(Z).
/// - j = 3: both attributes (+4/9) and a mixed new tuple (−2/9): d = H(Z).
/// - j = 2, 9: both attributes (+4/9); the pair mixes, but it breaks up the mixed
///   (State-gov, Mexico) tuple: I unchanged, d = 4/9 + I0.
/// - j = 6: both attributes (+4/9), two Heart Disease records: d = 4/9 + I0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table1_distances_from_instance_1() {
    let ft = table1_ft().await;
    let i0 = h_z() - 2.0 / 9.0;
    let want = [
        (2, 4.0 / 9.0 + i0),
        (3, h_z()),
        (4, i0),
        (5, h_z()),
        (6, 4.0 / 9.0 + i0),
        (7, i0),
        (8, i0),
        (9, 4.0 / 9.0 + i0),
    ];
    let state = State::new(&ft, true).unwrap();
    assert!((state.objective() - i0).abs() < 1e-12, "d of Table 1 itself is I(X;Z) = I0");
    for (j, d) in want {
        let got = state.pair_distance(row_of(&ft, 1), row_of(&ft, j));
        assert!((got - d).abs() < 1e-12, "d_1,{j} = {got}, by hand {d}");
    }
    // The three closest tie exactly, not just to rounding: their keys are sums of f(c) = c·log₂c
    // at small counts (f(2) = 2 exactly), so any of 4, 7, 8 is as close as the others.
    let (d4, d7, d8) = [4, 7, 8].map(|j| state.pair_distance(row_of(&ft, 1), row_of(&ft, j))).into();
    assert!(d4 == d8 && d7 == d8, "{d4} {d7} {d8}");

    // CE alone (the paper's baseline) sees only the generalization: 0 for the same record,
    // 2/9 per attribute that moves to a two-value label.
    let ce = State::new(&ft, false).unwrap();
    let want_ce = [(2, 4.0), (3, 4.0), (4, 2.0), (5, 2.0), (6, 4.0), (7, 2.0), (8, 0.0), (9, 4.0)];
    for (j, ninths) in want_ce {
        let got = ce.pair_distance(row_of(&ft, 1), row_of(&ft, j));
        assert!((got - ninths / 9.0).abs() < 1e-12, "CE d_1,{j} = {got}");
    }
}

/// Q-blocks of 3 from seeds 1 then 2 (the third block is what is left).
/// - Seed 1: 4, 7 and 8 tie at d = I0 (above); ties go to the earliest frequency-table row,
///   and rows are sorted by leaf code, here the hierarchy's order: Private (8) before
///   Federal-gov (4) before Self-emp-inc (7). Block {1, 8, 4} → (Workclass, USA).
/// - Seed 2: record 9 has its quasi-identifiers (key 0). Local-gov/Brazil (3) costs 4 (two new
///   two-value labels) + 2 (it splits the mixed State-gov/Mexico tuple into two pure ones,
///   and the pair is pure): 6 in N·d units; 5 costs 4.10 + 2 (Workclass already holds block 1's
///   three records) with I unchanged; 6 and 7 cost 8.85. Block {2, 9, 3} → (Government, South).
/// - {5, 6, 7} → (Workclass, North).
///
/// Every block mixes two diseases. CE alone, seeded with 1 and then the first record left,
/// builds exactly the paper's Table 2, whose block {1, 5, 8} is all Heart Disease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table1_q_blocks() {
    let ft = table1_ft().await;
    let blocks_of = |with_mi: bool| {
        let mut c = Clusterer::new(&ft, 3, with_mi).unwrap();
        c.form_block(row_of(&ft, 1));
        if c.remaining() >= 3 && with_mi {
            c.form_block(row_of(&ft, 2));
        }
        while c.remaining() >= 3 {
            let next = (1..=9).map(|i| row_of(&ft, i)).find(|&r| c.left_of(r) > 0).unwrap();
            c.form_block(next);
        }
        let labels = |b: &anonfusion::methods::entropy::Block| {
            let (hw, hc) = (&ft.qis[0].hierarchy, &ft.qis[1].hierarchy);
            format!(
                "{}/{}",
                hw.label(b.label[0].0 as usize, b.label[0].1),
                hc.label(b.label[1].0 as usize, b.label[1].1)
            )
        };
        c.blocks
            .iter()
            .map(|b| {
                let mut records: Vec<usize> = Vec::new();
                for &(row, n) in &b.members {
                    let mut same: Vec<usize> = (1..=9).filter(|&i| row_of(&ft, i) == row as usize).collect();
                    same.truncate(n as usize);
                    records.extend(same);
                }
                records.sort();
                (records, labels(b))
            })
            .collect::<Vec<_>>()
    };
    let d = blocks_of(true);
    assert_eq!(
        d,
        vec![
            (vec![1, 4, 8], "Workclass/USA".to_string()),
            (vec![2, 3, 9], "Government/South".to_string()),
            (vec![5, 6, 7], "Workclass/North".to_string()),
        ]
    );
    // CE builds exactly the paper's Table 2, homogeneous block included.
    let ce = blocks_of(false);
    assert_eq!(
        ce,
        vec![
            (vec![1, 5, 8], "Private/North".to_string()),
            (vec![2, 3, 9], "Government/South".to_string()),
            (vec![4, 6, 7], "Workclass/North".to_string()),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_release_report_and_determinism() {
    let ctx = table1().await;
    let out = rows(&ctx, "SELECT * FROM entropy_anonymize('t1', 'r', 3, 'seed=7')").await;
    assert_eq!(out.iter().map(|b| b.num_rows()).sum::<usize>(), 9);
    let text =
        pretty_format_batches(&rows(&ctx, "SELECT * FROM r ORDER BY class_id, disease").await).unwrap().to_string();
    assert!(text.contains("class_id") && text.contains("work") && text.contains("country"), "{text}");
    // Every block has at least k records, and the report counts them.
    assert_eq!(int(&ctx, "SELECT MIN(n) FROM (SELECT COUNT(*) AS n FROM r GROUP BY class_id)").await, 3);
    assert_eq!(int(&ctx, "SELECT q_blocks FROM r_report").await, 3);
    let diversity = int(&ctx, "SELECT q_blocks_l1 + q_blocks_l2 + q_blocks_l3plus FROM r_report").await;
    assert_eq!(diversity, 3);
    // Independent checks: k-anonymity by class, and the diversity counts of anon_metrics.
    let verified =
        pretty_format_batches(&rows(&ctx, "SELECT * FROM verify_release('t1', 'r', 'k=3')").await).unwrap().to_string();
    assert!(!verified.contains("| false"), "{verified}");
    for m in ["q_blocks_l1", "q_blocks_l2", "q_blocks_l3plus"] {
        let measured = int(&ctx, &format!("SELECT value FROM anon_metrics('t1', 'r') WHERE metric = '{m}'")).await;
        assert_eq!(measured, int(&ctx, &format!("SELECT {m} FROM r_report")).await, "{m}");
    }
    // Same seed, same release; CE is a different method.
    let again = rows(&ctx, "SELECT * FROM entropy_anonymize('t1', 'r2', 3, 'seed=7')").await;
    let t = |b: &[datafusion::arrow::array::RecordBatch]| pretty_format_batches(b).unwrap().to_string();
    assert_eq!(t(&out), t(&again));
    rows(&ctx, "SELECT * FROM entropy_anonymize('t1', 'r3', 3, 'seed=7, distance=ce')").await;
    let distance = pretty_format_batches(&rows(&ctx, "SELECT distance FROM r3_report").await).unwrap().to_string();
    assert!(distance.contains("| ce "), "{distance}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_named_and_registers_nothing() {
    let ctx = table1().await;
    let cases = [
        ("SELECT * FROM entropy_anonymize('t1', 'x', 1)", "k"),
        ("SELECT * FROM entropy_anonymize('t1', 'x', 10)", "larger than the table"),
        ("SELECT * FROM entropy_anonymize('t1', 'x', 3, 'distance=euclid')", "distance"),
        ("SELECT * FROM entropy_anonymize('t1', 'x', 3, 'seed=-1')", "seed"),
        ("SELECT * FROM entropy_anonymize('t1', 'x', 3, 'colour=red')", "unknown option"),
        ("SELECT * FROM entropy_anonymize('nope', 'x', 3)", "nope"),
        ("SELECT * FROM entropy_anonymize('t1', 't1', 3)", "output"),
        ("SELECT * FROM entropy_anonymize('t1', 'x', 3, 'entropy_l=many')", "entropy_l"),
        ("SELECT * FROM entropy_anonymize('t1', 'x', 3, 'entropy_l=0.5')", "entropy_l"),
        ("SELECT * FROM entropy_anonymize('t1', 'x', 3, 't=2')", "'t': must be a number in [0, 1]"),
        // Table 1 as a whole (4 Heart Disease, 2 Cancer, 3 Flu) has entropy 1.060 < ln 3, and
        // blocks that hold entropy 3-diversity would make a table that does.
        ("SELECT * FROM entropy_anonymize('t1', 'x', 3, 'entropy_l=3')", "the whole table does not satisfy"),
    ];
    for (sql, needle) in cases {
        let e = err(&ctx, sql).await;
        assert!(e.contains(needle), "{sql}: {e}");
        assert!(!ctx.table_exist("x").unwrap() && !ctx.table_exist("x_report").unwrap(), "{sql}");
    }
    // No sensitive attribute declared, and a sensitive column with no values.
    rows(&ctx, "CREATE TABLE t2 AS SELECT work, country FROM t1").await;
    rows(&ctx, "SELECT * FROM declare_roles('t2', 'work=qi, country=qi')").await;
    rows(&ctx, "SELECT * FROM hierarchy_from_table('t2', 'work', 'workh')").await;
    rows(&ctx, "SELECT * FROM hierarchy_from_table('t2', 'country', 'countryh')").await;
    let e = err(&ctx, "SELECT * FROM entropy_anonymize('t2', 'x', 3)").await;
    assert!(e.contains("sensitive"), "{e}");
    rows(&ctx, "CREATE TABLE t3 AS SELECT work, country, CAST(NULL AS VARCHAR) AS disease FROM t1").await;
    rows(&ctx, "SELECT * FROM declare_roles('t3', 'work=qi, country=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM hierarchy_from_table('t3', 'work', 'workh')").await;
    rows(&ctx, "SELECT * FROM hierarchy_from_table('t3', 'country', 'countryh')").await;
    let e = err(&ctx, "SELECT * FROM entropy_anonymize('t3', 'x', 3)").await;
    assert!(e.contains("disease"), "{e}");
    assert!(!ctx.table_exist("x").unwrap());
}

/// The guards: every block entropy 2-diverse or 0.3-close as well, for either distance and any
/// seed, as `verify_release` (its own code) finds; the report names the guard, and no guard
/// reports NULL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarded_blocks_pass_the_verifier() {
    let ctx = table1().await;
    let text = |b: &[datafusion::arrow::array::RecordBatch]| pretty_format_batches(b).unwrap().to_string();
    let cases = [("entropy_l=2", "k=3, entropy_l=2"), ("t=0.3", "k=3, t=0.3")];
    for (i, (guard, checks)) in cases.into_iter().enumerate() {
        for distance in ["d", "ce"] {
            for seed in 0..6 {
                let out = format!("g{i}_{distance}_{seed}");
                let sql = format!(
                    "SELECT * FROM entropy_anonymize('t1', '{out}', 3, 'seed={seed}, distance={distance}, {guard}')"
                );
                assert_eq!(rows(&ctx, &sql).await.iter().map(|b| b.num_rows()).sum::<usize>(), 9);
                let verified =
                    text(&rows(&ctx, &format!("SELECT * FROM verify_release('t1', '{out}', '{checks}')")).await);
                assert!(!verified.contains("| false"), "{sql}\n{verified}");
                let privacy = text(&rows(&ctx, &format!("SELECT privacy FROM {out}_report")).await);
                assert!(privacy.contains(&format!("k=3, {guard}")), "{privacy}");
            }
        }
    }
    rows(&ctx, "SELECT * FROM entropy_anonymize('t1', 'plain', 3, 'seed=1')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM plain_report WHERE privacy IS NULL").await, 1);
}

/// The paper's setting on the first 3,000 rows of adult_uci (9 categorical attributes,
/// relationship included): entropy 3-diverse and 0.15-close Q-blocks of size 3 hold their
/// guards under verify_release; entropy 3-diversity keeps nearly every block at 3 records
/// (three distinct occupations), t-closeness needs much larger blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paper_baselines_on_adult_uci() {
    let (ctx, _registry) = anonfusion::session();
    rows(&ctx, "SELECT * FROM load_dataset('adult_uci', 3000, NULL, 'a')").await;
    let text = |b: &[datafusion::arrow::array::RecordBatch]| pretty_format_batches(b).unwrap().to_string();
    for (out, guard, checks) in [("al", "entropy_l=3", "k=3, entropy_l=3"), ("at", "t=0.15", "k=3, t=0.15")] {
        rows(&ctx, &format!("SELECT COUNT(*) FROM entropy_anonymize('a', '{out}', 3, 'seed=1, distance=ce, {guard}')"))
            .await;
        let verified = text(&rows(&ctx, &format!("SELECT * FROM verify_release('a', '{out}', '{checks}')")).await);
        assert!(!verified.contains("| false"), "{verified}");
        let columns = text(&rows(&ctx, &format!("SELECT * FROM {out} LIMIT 1")).await);
        assert!(columns.contains("relationship") && !columns.contains("age"), "{columns}");
    }
    let blocks = int(&ctx, "SELECT q_blocks FROM al_report").await;
    let of_three =
        int(&ctx, "SELECT COUNT(*) FROM (SELECT class_id FROM al GROUP BY class_id HAVING COUNT(*) = 3)").await;
    assert!(of_three * 100 >= blocks * 95, "{of_three} of {blocks} blocks have 3 records");
    assert_eq!(int(&ctx, "SELECT q_blocks_l1 + q_blocks_l2 FROM al_report").await, 0);
    // t = 0.15 needs blocks of many records, but still many blocks, none of them the table.
    let t_blocks = int(&ctx, "SELECT q_blocks FROM at_report").await;
    assert!(t_blocks * 5 < blocks && t_blocks >= 30, "{t_blocks} t-close blocks");
    assert!(int(&ctx, "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM at GROUP BY class_id)").await < 300);
}

/// A memoized call is not reused once the declarations change: the same arguments under other
/// roles make a new release.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_declarations_are_not_served_from_the_memo() {
    let ctx = table1().await;
    rows(&ctx, "SELECT COUNT(*) FROM entropy_anonymize('t1', 'r', 3, 'seed=1')").await;
    let before = pretty_format_batches(&rows(&ctx, "SELECT * FROM r LIMIT 1").await).unwrap().to_string();
    assert!(before.contains("country"), "{before}");
    rows(&ctx, "SELECT * FROM declare_roles('t1', 'work=qi, country=insensitive, disease=sensitive')").await;
    rows(&ctx, "SELECT COUNT(*) FROM entropy_anonymize('t1', 'r', 3, 'seed=1')").await;
    let after = pretty_format_batches(&rows(&ctx, "SELECT * FROM r LIMIT 1").await).unwrap().to_string();
    assert!(!after.contains("country"), "{after}");
}

/// A source of three patients, all F, with these ages and flu, asthma, other; ages under
/// 5-year bands, so 20, 21, 24 and 20, 20, 24 both publish `20-24`. Returns the release (rows
/// in order) and the report without its time, of `entropy_anonymize(…, 3, options)`.
async fn three_patients(ages: [i64; 3], options: &str) -> (SessionContext, String, String) {
    let (ctx, _registry) = anonfusion::session();
    let values: Vec<String> =
        ages.iter().zip(["flu", "asthma", "other"]).map(|(a, d)| format!("({a}, 'F', '{d}')")).collect();
    rows(&ctx, &format!("CREATE TABLE p (age BIGINT, sex VARCHAR, disease VARCHAR) AS VALUES {}", values.join(", ")))
        .await;
    rows(&ctx, "SELECT * FROM declare_roles('p', 'age=qi, sex=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '5,10,*', 0, 99)").await;
    rows(&ctx, "SELECT * FROM flat_hierarchy('p', 'sex', 'values=F|M')").await;
    rows(&ctx, &format!("SELECT COUNT(*) FROM entropy_anonymize('p', 'r', 3, '{options}')")).await;
    let text = |b: Vec<datafusion::arrow::array::RecordBatch>| pretty_format_batches(&b).unwrap().to_string();
    let release = text(rows(&ctx, "SELECT * FROM r ORDER BY class_id, disease").await);
    let report = text(rows(&ctx, "SELECT * EXCLUDE (time_ms) FROM r_report").await);
    (ctx, release, report)
}

/// Nothing published says more than the release: two sources whose releases are the same
/// have the same report. The report used to hold the blocks' losses and the objective,
/// entropies of the original ages inside the block (1.585 bits for 20, 21, 24 against 0.918
/// for 20, 20, 24: two of the three share an age), and counts of the clustering (rows scored:
/// two records of one age and sex are one row); they are in `output_diagnostics` now, on
/// request only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_release_has_the_same_report() {
    for distance in ["d", "ce"] {
        for seed in 0..4 {
            let options = format!("seed={seed}, distance={distance}");
            let (a, release_a, report_a) = three_patients([20, 21, 24], &options).await;
            let (_, release_b, report_b) = three_patients([20, 20, 24], &options).await;
            assert!(release_a.contains("20-24") && !release_a.contains("| 21 "), "{release_a}");
            assert_eq!(release_a, release_b, "{options}: the test needs the same release");
            assert_eq!(report_a, report_b, "{options}: the report says more than the release");
            assert!(!a.table_exist("r_diagnostics").unwrap(), "diagnostics are opt-in");
        }
    }
    // The numbers of the original are there on request, marked, and they differ.
    let loss = |ctx: SessionContext| async move {
        let marked = texts(&ctx, "SELECT not_for_publication FROM r_diagnostics").await;
        assert!(marked[0].starts_with("NOT FOR PUBLICATION"), "{marked:?}");
        texts(&ctx, "SELECT ROUND(total_information_loss, 3) FROM r_diagnostics").await
    };
    let (a, _, report_a) = three_patients([20, 21, 24], "seed=1, diagnostics=true").await;
    let (b, _, report_b) = three_patients([20, 20, 24], "seed=1, diagnostics=true").await;
    assert_eq!(report_a, report_b);
    assert_eq!(loss(a).await, vec!["1.585"]);
    assert_eq!(loss(b).await, vec!["0.918"]);
}
