//! Completing the alignment of original records to released classes: the greedy pass of
//! [`super::align`] can fill a class with records that had somewhere else to go and so strand
//! others. Placing records is a bipartite b-matching per sensitive value (original tuples on
//! one side, classes with room for the value on the other); an alternating path from a
//! stranded tuple through classes and the tuples already in them, ending at a class with room,
//! places more records without unplacing any (Ford–Fulkerson on unit capacities).

use super::decode::WITHHELD;
use std::collections::{HashMap, VecDeque};

/// The capacity a record of sensitive `code` takes in a block: its value's, or else the
/// block's withheld records' (suppressed shells, whose value could be any).
pub(crate) fn slot(capacity: &HashMap<u32, u64>, code: u32) -> u32 {
    if capacity.contains_key(&code) { code } else { WITHHELD }
}

/// Place the `left` records of every tuple along augmenting paths. `codes[r]` is tuple r's
/// sensitive code in the release (None: not placeable), `assign[r]` its (class, records), and
/// `covering(r)` every class whose values cover tuple r.
pub(crate) fn augment(
    codes: &[Option<u32>],
    left: &mut [u64],
    assign: &mut [Vec<(u32, u64)>],
    capacity: &mut [HashMap<u32, u64>],
    covering: impl Fn(usize) -> Vec<u32>,
) {
    let mut covers: HashMap<usize, Vec<u32>> = HashMap::new();
    let mut members: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for (r, placed) in assign.iter().enumerate() {
        for &(b, _) in placed {
            members.entry((b, codes[r].unwrap_or(0))).or_default().push(r);
        }
    }
    for r0 in 0..left.len() {
        let Some(z) = codes[r0] else { continue };
        while left[r0] > 0 {
            let Some(path) = find_path(r0, z, assign, capacity, &members, &mut covers, &covering) else { break };
            apply(r0, z, path, left, assign, capacity, &mut members);
        }
    }
}

/// A path r0 → c1 → t1 → c2 → … → ck (ck has room): the classes and the tuples moved out of
/// c1 … c(k−1), as (class, tuple that enters it).
type Path = Vec<(u32, usize)>;

fn find_path(
    r0: usize,
    z: u32,
    assign: &[Vec<(u32, u64)>],
    capacity: &[HashMap<u32, u64>],
    members: &HashMap<(u32, u32), Vec<usize>>,
    covers: &mut HashMap<usize, Vec<u32>>,
    covering: &impl Fn(usize) -> Vec<u32>,
) -> Option<Path> {
    let mut came_from: HashMap<u32, usize> = HashMap::new(); // class → tuple that reaches it
    let mut reached_by: HashMap<usize, u32> = HashMap::new(); // tuple → class it leaves
    let mut queue = VecDeque::from([r0]);
    reached_by.insert(r0, u32::MAX);
    while let Some(t) = queue.pop_front() {
        let classes = covers.entry(t).or_insert_with(|| covering(t)).clone();
        for c in classes {
            if came_from.contains_key(&c) {
                continue;
            }
            came_from.insert(c, t);
            if capacity[c as usize].get(&slot(&capacity[c as usize], z)).copied().unwrap_or(0) > 0 {
                return Some(unwind(c, &came_from, &reached_by));
            }
            for &t2 in members.get(&(c, z)).into_iter().flatten() {
                if !reached_by.contains_key(&t2) && amount(assign, t2, c) > 0 {
                    reached_by.insert(t2, c);
                    queue.push_back(t2);
                }
            }
        }
    }
    None
}

fn unwind(end: u32, came_from: &HashMap<u32, usize>, reached_by: &HashMap<usize, u32>) -> Path {
    let mut path = Vec::new();
    let mut c = end;
    loop {
        let t = came_from[&c];
        path.push((c, t));
        match reached_by[&t] {
            u32::MAX => return path,
            prev => c = prev,
        }
    }
}

fn amount(assign: &[Vec<(u32, u64)>], t: usize, c: u32) -> u64 {
    assign[t].iter().find(|p| p.0 == c).map_or(0, |p| p.1)
}

fn apply(
    r0: usize,
    z: u32,
    path: Path,
    left: &mut [u64],
    assign: &mut [Vec<(u32, u64)>],
    capacity: &mut [HashMap<u32, u64>],
    members: &mut HashMap<(u32, u32), Vec<usize>>,
) {
    let end = path[0].0;
    let key = slot(&capacity[end as usize], z);
    // Each moved tuple leaves the class the next step names; the bottleneck bounds them all.
    let mut delta = left[r0].min(capacity[end as usize][&key]);
    for w in path.windows(2) {
        delta = delta.min(amount(assign, w[0].1, w[1].0));
    }
    for (i, &(c, t)) in path.iter().enumerate() {
        add(assign, t, c, delta as i64);
        if let Some(&(from, _)) = path.get(i + 1) {
            add(assign, t, from, -(delta as i64));
        }
        let list = members.entry((c, z)).or_default();
        if !list.contains(&t) {
            list.push(t);
        }
    }
    *capacity[end as usize].get_mut(&key).expect("the path ends at a class with room") -= delta;
    left[r0] -= delta;
}

fn add(assign: &mut [Vec<(u32, u64)>], t: usize, c: u32, d: i64) {
    match assign[t].iter_mut().find(|p| p.0 == c) {
        Some(p) => p.1 = p.1.wrapping_add_signed(d),
        None => assign[t].push((c, d as u64)),
    }
    assign[t].retain(|p| p.1 > 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tuple 0 fits classes 0 and 1, tuple 1 only class 0, one record of room each. Greedy put
    /// tuple 0 in class 0; the path 1 → class 0 → tuple 0 → class 1 places both.
    /// Tuple 0 already in class 0 (now full), tuple 1 left; class 1 has room for one record of
    /// sensitive value 0. Returns (left, assignment, capacities).
    #[allow(clippy::type_complexity)]
    fn one_placed() -> ([u64; 2], Vec<Vec<(u32, u64)>>, Vec<HashMap<u32, u64>>) {
        ([0, 1], vec![vec![(0, 1)], vec![]], vec![HashMap::from([(0, 0)]), HashMap::from([(0, 1)])])
    }

    #[test]
    fn a_stranded_record_is_placed_by_moving_another() {
        let codes = [Some(0), Some(0)];
        let (mut left, mut assign, mut capacity) = one_placed();
        augment(&codes, &mut left, &mut assign, &mut capacity, |r| if r == 0 { vec![0, 1] } else { vec![0] });
        assert_eq!(left, [0, 0]);
        assert_eq!(assign, vec![vec![(1, 1)], vec![(0, 1)]]);
        assert_eq!(capacity[1][&0], 0);
    }

    /// Another sensitive value's room is not used, and a tuple with nowhere to go stays left.
    #[test]
    fn room_for_another_value_does_not_count() {
        let codes = [Some(0), Some(1)];
        let (mut left, mut assign, mut capacity) = one_placed();
        augment(&codes, &mut left, &mut assign, &mut capacity, |_| vec![0, 1]);
        assert_eq!(left, [0, 1]);
    }
}
