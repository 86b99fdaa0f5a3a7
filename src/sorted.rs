//! Orders: lists kept in ascending order, and types ordered by a hand-written `Ord`.

/// `PartialEq`, `Eq` and `PartialOrd` of a type from its hand-written `Ord` (one that
/// compares floats by `total_cmp`, so the three cannot be derived), for a heap's entries.
macro_rules! eq_and_partial_ord_from_ord {
    ($t:ty) => {
        impl PartialEq for $t {
            fn eq(&self, o: &Self) -> bool {
                self.cmp(o) == std::cmp::Ordering::Equal
            }
        }
        impl Eq for $t {}
        impl PartialOrd for $t {
            fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(o))
            }
        }
    };
}
pub(crate) use eq_and_partial_ord_from_ord;

/// Merge two lists ascending by `key` (each without repeated keys) into one: an element whose
/// key only one list holds is kept as it is, and the two elements of a key both hold become
/// `both(a, b)`.
#[inline]
pub(crate) fn merge_by_key<T: Copy, K: Ord>(
    a: &[T],
    b: &[T],
    key: impl Fn(&T) -> K,
    both: impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match key(&a[i]).cmp(&key(&b[j])) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(both(a[i], b[j]));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `df` grouped by `keys` with `aggregates`, its rows in key order, not the hash aggregate's
/// arrival order: a float summed over the groups (a measure, SUDA's DIS scores) is then the
/// same on every run. Without keys there is one group and nothing to order (DataFusion's
/// optimizer fails on an ORDER BY left empty).
pub(crate) fn aggregate_in_key_order(
    df: datafusion::dataframe::DataFrame,
    keys: Vec<datafusion::prelude::Expr>,
    aggregates: Vec<datafusion::prelude::Expr>,
) -> datafusion::error::Result<datafusion::dataframe::DataFrame> {
    let n = keys.len();
    let grouped = df.aggregate(keys, aggregates)?;
    if n == 0 {
        return Ok(grouped);
    }
    let order = grouped
        .schema()
        .columns()
        .into_iter()
        .take(n)
        .map(|c| datafusion::prelude::Expr::Column(c).sort(true, true))
        .collect();
    grouped.sort(order)
}

#[cfg(test)]
mod tests {
    use super::merge_by_key;

    #[test]
    fn union_and_sum_of_counts() {
        assert_eq!(merge_by_key(&[1u32, 3, 5], &[2, 3, 6, 7], |&x| x, |x, _| x), vec![1, 2, 3, 5, 6, 7]);
        let (a, b) = ([(1u128, 2u64), (4, 1)], [(0u128, 5u64), (4, 3)]);
        assert_eq!(merge_by_key(&a, &b, |e| e.0, |x, y| (x.0, x.1 + y.1)), vec![(0, 5), (1, 2), (4, 4)]);
    }
}
