//! Positional arguments of a table function, read from the constant-folded literals DataFusion
//! passes. Strings may arrive as Utf8, Utf8View or LargeUtf8; numbers are cast.

use crate::error::{AnonError, Result};
use crate::methods::options::Options;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Expr;

pub(crate) struct Args<'a> {
    function: &'static str,
    signature: &'static str,
    options: Option<&'static Options>,
    exprs: &'a [Expr],
}

impl<'a> Args<'a> {
    /// Check the argument count against `min..=max`; `signature` is shown in errors.
    pub(crate) fn new(
        function: &'static str,
        signature: &'static str,
        exprs: &'a [Expr],
        min: usize,
        max: usize,
    ) -> Result<Self> {
        Self::with_options(function, signature, None, exprs, min, max)
    }

    /// [`Args::new`] for a function whose options string `options` declares: the usage line
    /// in errors shows them.
    pub(crate) fn with_options(
        function: &'static str,
        signature: &'static str,
        options: Option<&'static Options>,
        exprs: &'a [Expr],
        min: usize,
        max: usize,
    ) -> Result<Self> {
        let args = Args { function, signature, options, exprs };
        if exprs.len() < min || exprs.len() > max {
            return Err(AnonError::argument(
                function,
                "arguments",
                format!("expected {}, got {} argument(s)", args.usage(), exprs.len()),
            ));
        }
        Ok(args)
    }

    /// The signature with the declared options filled in.
    fn usage(&self) -> String {
        Options::usage_of(self.signature, self.options)
    }

    pub(crate) fn function(&self) -> &'static str {
        self.function
    }

    fn err(&self, name: &str, message: impl Into<String>) -> AnonError {
        AnonError::argument(self.function, name, format!("{} (usage: {})", message.into(), self.usage()))
    }

    fn scalar(&self, i: usize, name: &str) -> Result<Option<&ScalarValue>> {
        match self.exprs.get(i) {
            None => Ok(None),
            Some(Expr::Literal(v, _)) if v.is_null() => Ok(None),
            Some(Expr::Literal(v, _)) => Ok(Some(v)),
            Some(other) => Err(self.err(name, format!("must be a constant, got {other}"))),
        }
    }

    pub(crate) fn opt_str(&self, i: usize, name: &str) -> Result<Option<String>> {
        match self.scalar(i, name)? {
            None => Ok(None),
            Some(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s))) => {
                Ok(Some(s.clone()))
            }
            Some(v) => Err(self.err(name, format!("must be a string, got {v}"))),
        }
    }

    pub(crate) fn str(&self, i: usize, name: &str) -> Result<String> {
        self.opt_str(i, name)?.ok_or_else(|| self.err(name, "is required"))
    }

    /// The first two arguments of a method that publishes a table: the source and a plain,
    /// different output name, normalized the way DataFusion resolves an unquoted name (lower
    /// case), so `'ADULT'` is the table `adult`.
    pub(crate) fn source_output(&self) -> Result<(String, String)> {
        let (source, output) = (self.str(0, "source")?, self.str(1, "output")?);
        super::glue::check_output_name(self.function, &output)?;
        let output = crate::session::outputs::normalize(&output);
        if output == crate::session::outputs::normalize(&source) {
            return Err(AnonError::argument(self.function, "output", "must differ from the source table"));
        }
        Ok((source, output))
    }

    pub(crate) fn opt_i64(&self, i: usize, name: &str) -> Result<Option<i64>> {
        match self.scalar(i, name)? {
            None => Ok(None),
            Some(v) => match v.cast_to(&DataType::Int64) {
                Ok(ScalarValue::Int64(Some(n))) if !matches!(v, ScalarValue::Float64(Some(f)) if f.fract() != 0.0) => {
                    Ok(Some(n))
                }
                _ if whole_number(v) => Err(self.err(
                    name,
                    format!(
                        "is out of range: must be an integer from {} to {}, got {}",
                        i64::MIN,
                        i64::MAX,
                        readable(v)
                    ),
                )),
                _ => Err(self.err(name, format!("must be an integer, got {}", readable(v)))),
            },
        }
    }

    pub(crate) fn i64(&self, i: usize, name: &str) -> Result<i64> {
        self.opt_i64(i, name)?.ok_or_else(|| self.err(name, "is required"))
    }

    pub(crate) fn opt_f64(&self, i: usize, name: &str) -> Result<Option<f64>> {
        match self.scalar(i, name)? {
            None => Ok(None),
            Some(v) => match v.cast_to(&DataType::Float64) {
                Ok(ScalarValue::Float64(Some(x))) if x.is_finite() => Ok(Some(x)),
                _ => Err(self.err(name, format!("must be a number, got {}", readable(v)))),
            },
        }
    }

    /// A required integer of at least `min` (a method's k).
    pub(crate) fn at_least(&self, i: usize, name: &str, min: u64) -> Result<u64> {
        let n = self.i64(i, name)?;
        u64::try_from(n)
            .ok()
            .filter(|&n| n >= min)
            .ok_or_else(|| AnonError::argument(self.function, name, format!("must be at least {min}, got {n}")))
    }

    pub(crate) fn f64(&self, i: usize, name: &str) -> Result<f64> {
        self.opt_f64(i, name)?.ok_or_else(|| self.err(name, "is required"))
    }

    /// An optional non-negative integer that fits `u64`.
    pub(crate) fn opt_u64(&self, i: usize, name: &str) -> Result<Option<u64>> {
        match self.opt_i64(i, name)? {
            Some(n) if n < 0 => Err(self.err(name, format!("must not be negative, got {n}"))),
            other => Ok(other.map(|n| n as u64)),
        }
    }
}

/// A whole number (an integer of any width, a decimal or float without a fraction): an
/// argument that is one but does not fit i64 is out of range, not "not an integer".
fn whole_number(v: &ScalarValue) -> bool {
    !matches!(v, ScalarValue::Utf8(_) | ScalarValue::LargeUtf8(_) | ScalarValue::Utf8View(_))
        && matches!(v.cast_to(&DataType::Float64), Ok(ScalarValue::Float64(Some(x))) if x.is_finite() && x.fract() == 0.0)
}

/// An argument as an error shows it: a float far from 1 in exponent form (`1e300`, not 301
/// digits).
fn readable(v: &ScalarValue) -> String {
    match v {
        ScalarValue::Float64(Some(x)) if x.is_finite() && *x != 0.0 && !(1e-6..1e15).contains(&x.abs()) => {
            format!("{x:e}")
        }
        _ => v.to_string(),
    }
}
