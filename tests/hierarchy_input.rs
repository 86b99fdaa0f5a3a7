//! Hierarchy builders on input at the edges of their types: each test reproduces a defect
//! found with the release binary (a hang, memory quadratic in a value's length, and errors
//! that blamed the wrong thing), and checks that the error names the column or argument at
//! fault and never a value of the table.

mod common;

use common::{err, int, rows};
use datafusion::prelude::SessionContext;

/// A one-column table `t` with the column declared a quasi-identifier.
async fn table(ctx: &SessionContext, column: &str, values: &str) {
    rows(ctx, &format!("CREATE TABLE t ({column}, d VARCHAR) AS VALUES {values}")).await;
    let name = column.split(' ').next().unwrap();
    rows(ctx, &format!("SELECT * FROM declare_roles('t', '{name}=qi, d=sensitive')")).await;
}

/// `hi - lo` wrapped in the release build (overflowed here): declared bounds of ±9e18, or a
/// BIGINT column holding i64::MIN and i64::MAX, hung and ate memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_widest_integer_domains_are_refused_not_enumerated() {
    let ctx = anonfusion::new_session();
    table(&ctx, "age BIGINT", "(-9223372036854775807 - 1, 'a'), (9223372036854775807, 'b')").await;
    for sql in [
        "SELECT * FROM interval_hierarchy('t', 'age', '10,*', -9000000000000000000, 9000000000000000000)",
        "SELECT * FROM interval_hierarchy('t', 'age', '10,*')",
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains("max") && e.contains("more than 10 million integers"), "{sql}: {e}");
        assert!(!e.contains("9223372036854775807"), "{sql}: a value is echoed: {e}");
    }
}

/// Bounds near i64::MAX: the leaves collided through f64 rounding ("lines 1 and 2: their
/// leaves are the same number").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounds_beyond_exact_integers_are_named() {
    let ctx = anonfusion::new_session();
    table(&ctx, "age BIGINT", "(9223372036854775801, 'a')").await;
    let e = err(&ctx, "SELECT * FROM interval_hierarchy('t', 'age', '10,*', 9223372036854775800, 9223372036854775807)")
        .await;
    assert!(e.contains("max") && e.contains("2^53") && !e.contains("same number"), "{e}");
    // Without bounds they are the column's min and max: not echoed.
    let e = err(&ctx, "SELECT * FROM interval_hierarchy('t', 'age', '10,*')").await;
    assert!(e.contains("2^53") && !e.contains("9223372036854775801"), "{e}");
}

/// A bound too wide for a 64-bit integer is out of range, shown as 1e300, not as 301 digits
/// under "must be an integer".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_beyond_bigint_is_out_of_range() {
    let ctx = anonfusion::new_session();
    table(&ctx, "age BIGINT", "(30, 'a')").await;
    let e = err(&ctx, "SELECT * FROM interval_hierarchy('t', 'age', '5', 0, 1e300)").await;
    assert!(e.contains("'max': is out of range") && e.contains("got 1e300") && !e.contains("00000000000"), "{e}");
}

/// One value of 50,000 characters took 7.4 GB; one of 950,000 got the process killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn masking_refuses_a_value_longer_than_its_limit() {
    let ctx = anonfusion::new_session();
    table(&ctx, "zip VARCHAR", "(repeat('7', 1001), 'a'), ('02139', 'b')").await;
    let e = err(&ctx, "SELECT * FROM masking_hierarchy('t', 'zip')").await;
    assert!(e.contains("'zip'") && e.contains("at most 1000 characters"), "{e}");
    assert!(!e.contains("7777") && !e.contains("1001"), "a value or its length is echoed: {e}");
    rows(&ctx, "CREATE VIEW v AS SELECT substr(zip, 1, 1000) AS zip, d FROM t").await;
    rows(&ctx, "SELECT * FROM declare_roles('v', 'zip=qi, d=sensitive')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM masking_hierarchy('v', 'zip')").await, 2);
}

/// A UInt64 above i64::MAX failed the cast to Int64, and the error said the column "has no
/// values to take min and max from".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsigned_values_beyond_bigint_are_named() {
    let ctx = anonfusion::new_session();
    table(&ctx, "u BIGINT UNSIGNED", "(CAST('18446744073709551615' AS BIGINT UNSIGNED), 'a'), (1, 'b')").await;
    let e = err(&ctx, "SELECT * FROM interval_hierarchy('t', 'u', '10,100,*')").await;
    assert!(e.contains("'u'") && e.contains("do not fit a 64-bit signed integer"), "{e}");
    assert!(!e.contains("no values") && !e.contains("18446744073709551615"), "{e}");
}

/// A DATE column gave arrow's raw "Casting from Date32 to Float64 not supported".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_date_column_is_pointed_to_date_hierarchy() {
    let ctx = anonfusion::new_session();
    table(&ctx, "dt DATE", "(DATE '1970-01-11', 'a'), (DATE '1971-06-01', 'b')").await;
    for sql in [
        "SELECT * FROM interval_hierarchy('t', 'dt', '10,100,*', 0, 1000)",
        "SELECT * FROM interval_hierarchy('t', 'dt', '10,100,*')",
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains("'dt'") && e.contains("Date32") && e.contains("date_hierarchy"), "{sql}: {e}");
        assert!(!e.contains("Cast error") && !e.contains("1971"), "{sql}: {e}");
    }
    // What the error suggests works: day numbers in a view.
    rows(&ctx, "CREATE VIEW v AS SELECT CAST(dt AS INT) AS dt, d FROM t").await;
    rows(&ctx, "SELECT * FROM declare_roles('v', 'dt=qi, d=sensitive')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM interval_hierarchy('v', 'dt', '10,100,*', 0, 1000)").await, 1001);
}

/// An empty string was reported as "line 1: field 1 is empty", a line the user never wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_string_is_named_as_such() {
    let ctx = anonfusion::new_session();
    table(&ctx, "s VARCHAR", "('', 'a'), ('x7', 'b')").await;
    for f in ["flat_hierarchy", "masking_hierarchy"] {
        let e = err(&ctx, &format!("SELECT * FROM {f}('t', 's')")).await;
        assert!(e.contains("'s'") && e.contains("empty strings") && e.contains("NULLIF"), "{f}: {e}");
        assert!(!e.contains("line 1") && !e.contains("x7"), "{f}: {e}");
    }
    rows(&ctx, "CREATE VIEW v AS SELECT NULLIF(s, '') AS s, d FROM t").await;
    rows(&ctx, "SELECT * FROM declare_roles('v', 's=qi, d=sensitive')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM flat_hierarchy('v', 's')").await, 2);
}
