//! Newton–Raphson for two equations in two unknowns, with the restart scheme ARX's solver
//! uses so that both land on the same root: the model's own start first, then the sixteen
//! points {0, 0.33, 0.66, 0.99}² in that order, each try ending on a non-finite iterate, a
//! violated constraint or too many iterations. Deterministic: no clock, no random restarts.

/// A point (x, y), a system's value (f1, f2), or a row of a Jacobian.
pub(crate) type Pair = (f64, f64);

/// The system: its value and its Jacobian [[∂f1/∂x, ∂f1/∂y], [∂f2/∂x, ∂f2/∂y]] at a point.
pub(crate) trait System {
    fn value(&self, at: Pair) -> Pair;
    fn jacobian(&self, at: Pair) -> [Pair; 2];
    /// Where the parameters may go; an iterate outside ends the try.
    fn admissible(&self, _at: Pair) -> bool {
        true
    }
}

/// |f1|, |f2| at or below this is a root. Tighter than ARX's 1e-6 on the same equations, so the
/// reported root does not depend on where an iteration happened to stop.
const ACCURACY: f64 = 1e-10;
const ITERATIONS_PER_TRY: usize = 1000;

fn starts(first: Pair) -> impl Iterator<Item = Pair> {
    let grid = [0.0, 0.33, 0.66, 0.99];
    std::iter::once(first).chain(grid.into_iter().flat_map(move |a| grid.into_iter().map(move |b| (a, b))))
}

/// A root of `system`, or None when no start converges.
pub(crate) fn solve(system: &impl System, first: Pair) -> Option<Pair> {
    starts(first).find_map(|start| one_try(system, start))
}

fn one_try(system: &impl System, mut at: Pair) -> Option<Pair> {
    for _ in 0..ITERATIONS_PER_TRY {
        let f = system.value(at);
        if !(f.0.is_finite() && f.1.is_finite()) {
            return None;
        }
        if f.0.abs() <= ACCURACY && f.1.abs() <= ACCURACY {
            return Some(at);
        }
        let [(a, b), (c, d)] = system.jacobian(at);
        let det = a * d - b * c;
        // Newton step: J⁻¹ f.
        let step = ((d * f.0 - b * f.1) / det, (a * f.1 - c * f.0) / det);
        let next = (at.0 - step.0, at.1 - step.1);
        if !(next.0.is_finite() && next.1.is_finite() && system.admissible(next)) {
            return None;
        }
        // A step below the resolution of f64 cannot improve f further: accept when f is
        // already small relative to the equations' own scale.
        if next == at {
            return (f.0.abs() <= 1e-7 && f.1.abs() <= 1e-7).then_some(at);
        }
        at = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x² + y² = 4 and x = y: roots ±(√2, √2).
    struct Circle;
    impl System for Circle {
        fn value(&self, (x, y): Pair) -> Pair {
            (x * x + y * y - 4.0, x - y)
        }
        fn jacobian(&self, (x, y): Pair) -> [Pair; 2] {
            [(2.0 * x, 2.0 * y), (1.0, -1.0)]
        }
        fn admissible(&self, (x, _): Pair) -> bool {
            x >= 0.0
        }
    }

    #[test]
    fn finds_the_admissible_root() {
        let (x, y) = solve(&Circle, (3.0, 1.0)).expect("converges");
        assert!((x - 2f64.sqrt()).abs() < 1e-10 && (y - 2f64.sqrt()).abs() < 1e-10);
    }

    #[test]
    fn a_start_that_leaves_the_domain_falls_back_to_the_grid() {
        // From (−3, −1) every iterate has x < 0: the try ends and the grid's starts find +√2.
        let (x, _) = solve(&Circle, (-3.0, -1.0)).expect("converges from the grid");
        assert!((x - 2f64.sqrt()).abs() < 1e-10);
    }
}
