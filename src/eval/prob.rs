//! The probability that a released record satisfies a WHERE clause, with attributes
//! independent of each other and each uniform over its covered leaves.
//!
//! Sub-formulas over disjoint attributes multiply (AND) or combine as 1 - Π(1 - p) (OR); a
//! sub-formula whose parts share an attribute is expanded over that attribute's values
//! (Shannon expansion), which is exact under the model and costs only what the sharing needs.

use super::dist::{Support, Val};
use super::parse::{CmpOp, Lit};
use std::cmp::Ordering;
use std::collections::HashMap;

/// A test of one variable's value.
#[derive(Debug, Clone)]
pub(crate) enum Test {
    Cmp(CmpOp, Lit),
    In(Vec<Lit>, bool),
    Between(Lit, Lit, bool),
    IsTrue,
}

fn compare(v: &Val, lit: &Lit) -> Option<Ordering> {
    match (v, lit) {
        (Val::Num(a), Lit::Num(b)) => a.partial_cmp(b),
        (Val::Str(a), Lit::Str(b)) => Some(a.as_ref().cmp(b.as_str())),
        _ => None,
    }
}

impl Test {
    /// SQL semantics for one value; a NULL (or a type mismatch) makes a comparison false.
    pub(crate) fn eval(&self, v: &Val) -> bool {
        match self {
            Test::IsTrue => matches!(v, Val::Bool(true)),
            Test::Cmp(op, lit) => compare(v, lit).is_some_and(|o| match op {
                CmpOp::Eq => o == Ordering::Equal,
                CmpOp::NotEq => o != Ordering::Equal,
                CmpOp::Lt => o == Ordering::Less,
                CmpOp::LtEq => o != Ordering::Greater,
                CmpOp::Gt => o == Ordering::Greater,
                CmpOp::GtEq => o != Ordering::Less,
            }),
            Test::In(list, negated) => {
                if matches!(v, Val::Null) {
                    return false;
                }
                list.iter().any(|l| compare(v, l) == Some(Ordering::Equal)) != *negated
            }
            Test::Between(lo, hi, negated) => match (compare(v, lo), compare(v, hi)) {
                (Some(a), Some(b)) => (a != Ordering::Less && b != Ordering::Greater) != *negated,
                _ => false,
            },
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Node {
    And(Vec<Node>, u64),
    Or(Vec<Node>, u64),
    Not(Box<Node>),
    Atom(usize, Test),
}

impl Node {
    /// Bit set of the variables the node reads.
    pub(crate) fn mask(&self) -> u64 {
        match self {
            Node::And(_, m) | Node::Or(_, m) => *m,
            Node::Not(n) => n.mask(),
            Node::Atom(v, _) => 1 << v,
        }
    }

    pub(crate) fn and(children: Vec<Node>) -> Node {
        let m = children.iter().fold(0, |m, c| m | c.mask());
        Node::And(children, m)
    }

    pub(crate) fn or(children: Vec<Node>) -> Node {
        let m = children.iter().fold(0, |m, c| m | c.mask());
        Node::Or(children, m)
    }
}

/// Probabilities of atoms over large supports, keyed by (support, test) identity: released
/// values repeat across tuples (their supports are cached, and kept alive, by the scan: every
/// support this long is one of those), so a wide range is scanned once.
pub(crate) type AtomMemo = HashMap<(usize, usize), f64>;

/// Supports at least this long go through the memo; shorter ones are cheaper to rescan.
const MEMO_MIN_LEN: usize = 32;

/// Per-record state: each variable's distribution, and the values fixed by conditioning.
pub(crate) struct Env<'a> {
    supports: &'a [Support],
    pub(crate) fixed: Vec<Option<Val>>,
    fixed_mask: u64,
    memo: &'a mut AtomMemo,
}

impl<'a> Env<'a> {
    pub(crate) fn new(supports: &'a [Support], memo: &'a mut AtomMemo) -> Self {
        Env { supports, fixed: vec![None; supports.len()], fixed_mask: 0, memo }
    }

    pub(crate) fn fix(&mut self, var: usize, v: Val) {
        self.fixed[var] = Some(v);
        self.fixed_mask |= 1 << var;
    }

    pub(crate) fn unfix(&mut self, var: usize) {
        self.fixed[var] = None;
        self.fixed_mask &= !(1 << var);
    }
}

/// P(node) under the record's distributions and the fixed values.
pub(crate) fn prob(n: &Node, env: &mut Env) -> f64 {
    match n {
        Node::Atom(var, test) => match &env.fixed[*var] {
            Some(v) => test.eval(v) as u8 as f64,
            None => atom_prob(&env.supports[*var], test, env.memo),
        },
        Node::Not(x) => 1.0 - prob(x, env),
        Node::And(xs, _) => junction(&xs.iter().collect::<Vec<_>>(), true, env),
        Node::Or(xs, _) => junction(&xs.iter().collect::<Vec<_>>(), false, env),
    }
}

fn atom_prob(support: &Support, test: &Test, memo: &mut AtomMemo) -> f64 {
    let scan = || support.iter().filter(|(v, _)| test.eval(v)).map(|(_, w)| w).sum();
    if support.len() < MEMO_MIN_LEN {
        return scan();
    }
    let key = (std::sync::Arc::as_ptr(support) as usize, test as *const Test as usize);
    *memo.entry(key).or_insert_with(scan)
}

/// AND (or OR) of children: independent groups of children combine directly; a group that
/// shares free variables is expanded over one of them.
fn junction(xs: &[&Node], is_and: bool, env: &mut Env) -> f64 {
    let free: Vec<u64> = xs.iter().map(|x| x.mask() & !env.fixed_mask).collect();
    let mut acc = 1.0;
    for comp in components(&free) {
        let p = if comp.len() == 1 {
            prob(xs[comp[0]], env)
        } else {
            let members: Vec<&Node> = comp.iter().map(|&i| xs[i]).collect();
            expand(&members, &comp.iter().map(|&i| free[i]).collect::<Vec<_>>(), is_and, env)
        };
        acc *= if is_and { p } else { 1.0 - p };
    }
    if is_and { acc } else { 1.0 - acc }
}

/// Condition on the variable most children share, then combine the children again.
fn expand(xs: &[&Node], free: &[u64], is_and: bool, env: &mut Env) -> f64 {
    let var = (0..64).max_by_key(|&b| free.iter().filter(|m| *m & (1 << b) != 0).count()).unwrap_or(0);
    let support = env.supports[var].clone();
    let mut total = 0.0;
    for (v, w) in support.iter() {
        env.fix(var, v.clone());
        total += w * junction(xs, is_and, env);
        env.unfix(var);
    }
    total
}

/// Connected components of children linked by shared variables (a child with no free
/// variable is a component of its own).
fn components(free: &[u64]) -> Vec<Vec<usize>> {
    let mut comps: Vec<(u64, Vec<usize>)> = Vec::new();
    for (i, &m) in free.iter().enumerate() {
        let mut merged = (m, vec![i]);
        if m != 0 {
            let mut k = 0;
            while k < comps.len() {
                if comps[k].0 & merged.0 != 0 {
                    let (cm, ci) = comps.swap_remove(k);
                    merged.0 |= cm;
                    merged.1.extend(ci);
                } else {
                    k += 1;
                }
            }
        }
        comps.push(merged);
    }
    comps
        .into_iter()
        .map(|(_, mut v)| {
            v.sort_unstable();
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::dist::uniform;
    use super::*;

    fn nums(r: std::ops::RangeInclusive<i32>) -> Support {
        uniform(r.map(|x| Val::Num(x as f64)).collect())
    }

    #[test]
    fn independent_and_shared_attributes() {
        let s = [nums(0..=9), nums(0..=3)];
        let mut memo = AtomMemo::new();
        let mut env = Env::new(&s, &mut memo);
        let lt5 = Node::Atom(0, Test::Cmp(CmpOp::Lt, Lit::Num(5.0)));
        let eq1 = Node::Atom(1, Test::Cmp(CmpOp::Eq, Lit::Num(1.0)));
        assert!((prob(&Node::and(vec![lt5.clone(), eq1.clone()]), &mut env) - 0.5 * 0.25).abs() < 1e-12);
        assert!((prob(&Node::or(vec![lt5.clone(), eq1]), &mut env) - (1.0 - 0.5 * 0.75)).abs() < 1e-12);
        // age < 5 OR age >= 8 on one attribute: 5/10 + 2/10, not 1 - 0.5 * 0.8.
        let ge8 = Node::Atom(0, Test::Cmp(CmpOp::GtEq, Lit::Num(8.0)));
        assert!((prob(&Node::or(vec![lt5.clone(), ge8.clone()]), &mut env) - 0.7).abs() < 1e-12);
        assert!((prob(&Node::and(vec![lt5, Node::Not(Box::new(ge8))]), &mut env) - 0.5).abs() < 1e-12);
    }
}
