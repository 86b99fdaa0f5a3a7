//! Numbers in results as users read them. A value computed as a sum of fractions
//! (`434.00000000000006` patients) or kept on a binary grid (an epsilon of 1 charged as
//! 2^-32 units, `0.9999999995343387`; a delta of 1e-6 on 2^-64, `9.9999999999997e-7`) prints
//! with the noise of its last bits, and an error that cancels to nothing as `-0`. Rounded to a
//! number of significant digits far below the computation's precision, they print as the
//! number they stand for. (Messages format numbers with [`crate::dp::ledger::shown`].)

/// `x` rounded to `digits` (≥ 1) significant decimal digits, with `-0.0` as `0.0`; NaN and
/// infinities unchanged.
pub(crate) fn significant(x: f64, digits: usize) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x + 0.0;
    }
    let rounded: f64 = format!("{x:.*e}", digits.max(1) - 1).parse().unwrap_or(x);
    rounded + 0.0
}

#[cfg(test)]
mod tests {
    use super::significant;

    #[test]
    fn grid_and_summation_noise_prints_as_the_number_meant() {
        assert_eq!(significant(0.9999999995343387, 9).to_string(), "1");
        assert_eq!(significant(9.9999999999997e-7, 9).to_string(), "0.000001");
        assert_eq!(significant(434.00000000000006, 12).to_string(), "434");
        assert_eq!(significant(-0.0, 12).to_string(), "0");
        assert_eq!(significant(-1e-300, 12), -1e-300);
        assert_eq!(significant(0.1234567891234, 9), 0.123456789);
        assert!(significant(f64::NAN, 9).is_nan());
        assert_eq!(significant(f64::INFINITY, 9), f64::INFINITY);
    }
}
