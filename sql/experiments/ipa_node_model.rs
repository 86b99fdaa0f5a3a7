//! Every node of the NPS-like lattice under the sound `pure` histogram with its publication
//! floor (docs/results/ipa.md, "Every node"): expected IL = NCP + EMD + Rate and expected
//! ARE of Q1/Q2 through the query harness's estimate, by Monte Carlo with the exact noise
//! distributions (discrete Laplace c + X for every non-empty cell; for the empty cells of a
//! combination the number published is binomial, each published one T + geometric, which is
//! X conditioned on X ≥ T). A plain re-implementation that shares nothing with the engine
//! (std only, its own RNG: not a private release); validated against the engine's
//! `dp_histogram` at three nodes (sql/experiments/ipa_node_validate.sql).
//!
//!   anonfusion --format csv -c "SELECT COUNT(*) FROM load_dataset('nps')" \
//!     -c "SELECT age, sex, length_of_stay AS los, location, surgery, disease, COUNT(*) AS n
//!         FROM nps GROUP BY 1,2,3,4,5,6" | tail -n +3 > fine.csv
//!   rustc -O -o ipa_node_model sql/experiments/ipa_node_model.rs
//!   ./ipa_node_model fine.csv EPS_COUNTS FLOORS RUNS [NODES]   # e.g. 0.8 4 10, or 1.0 1,2,3,4,6 3
//!   ./ipa_node_model fine.csv 0.8 tau27 3      # approx: threshold τ = 27, empty cells never noised
//!
//! NODES: `all` (default: every node with at most 10,000,000 cells, the engine's max_cells)
//! or `a,s,l,lo,su;...`. Output, one line per node and floor (tab-separated): the node, T,
//! cells, real classes, mean classes, NCP, EMD, Rate, IL, Q1, Q2, and the parts of Q1/Q2's
//! error: generalization alone (exact counts at the node), and with noise on the real cells
//! but no counterfeits from empty cells.
use std::collections::HashMap;
use std::io::{BufRead, BufReader};

const AGE_W: [u32; 5] = [1, 5, 10, 20, 100];
const LOS_W: [u32; 6] = [1, 5, 10, 30, 90, 360];
const W: usize = 41; // declared disease domain
const MAX_CELLS: u64 = 10_000_000;
const REGION: [(&str, &str); 16] = [
    ("Seoul", "Capital area"),
    ("Busan", "Yeongnam"),
    ("Daegu", "Yeongnam"),
    ("Incheon", "Capital area"),
    ("Gwangju", "Honam"),
    ("Daejeon", "Chungcheong"),
    ("Ulsan", "Yeongnam"),
    ("Gyeonggi", "Capital area"),
    ("Gangwon", "Gangwon"),
    ("Chungbuk", "Chungcheong"),
    ("Chungnam", "Chungcheong"),
    ("Jeonbuk", "Honam"),
    ("Jeonnam", "Honam"),
    ("Gyeongbuk", "Yeongnam"),
    ("Gyeongnam", "Yeongnam"),
    ("Jeju", "Jeju"),
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }
    /// Failures before the first success, success probability 1 − q: P(g) = (1 − q) q^g.
    fn geometric(&mut self, ln_q: f64) -> i64 {
        (self.unit().ln() / ln_q).floor() as i64
    }
}

#[derive(Clone, Copy)]
struct Row {
    age: u32,
    sex: u32,
    los: u32,
    loc: u32,
    surg: u32,
    dis: u32,
    n: u32,
}

struct Node {
    levels: [usize; 5],
    widths: [u32; 5],
}

impl Node {
    fn new(levels: [usize; 5]) -> Node {
        let widths = [
            100 / AGE_W[levels[0]],
            if levels[1] == 0 { 2 } else { 1 },
            360 / LOS_W[levels[2]],
            [16, 6, 1][levels[3]],
            if levels[4] == 0 { 2 } else { 1 },
        ];
        Node { levels, widths }
    }
    fn combos(&self) -> u64 {
        self.widths.iter().map(|&w| w as u64).product()
    }
    fn codes(&self, r: &Row, region: &[u32; 16]) -> [u32; 5] {
        let l = &self.levels;
        [
            r.age / AGE_W[l[0]],
            if l[1] == 0 { r.sex } else { 0 },
            r.los / LOS_W[l[2]],
            [r.loc, region[r.loc as usize], 0][l[3]],
            if l[4] == 0 { r.surg } else { 0 },
        ]
    }
    fn index(&self, c: &[u32; 5]) -> u32 {
        let mut idx = 0u64;
        for a in (0..5).rev() {
            idx = idx * self.widths[a] as u64 + c[a] as u64;
        }
        idx as u32
    }
    fn decode(&self, mut idx: u32) -> [u32; 5] {
        let mut c = [0u32; 5];
        for a in 0..5 {
            c[a] = idx % self.widths[a];
            idx /= self.widths[a];
        }
        c
    }
}

struct Data {
    rows: Vec<Row>,
    region: [u32; 16],
    region_size: Vec<u32>,
    stroke: usize,
    /// Original Q1 (sex 0 = M) and Q2 (sex 1 = F) answers per 5-year group, groups present only.
    truth: [Vec<(usize, f64)>; 2],
}

fn load(path: &str) -> Data {
    let locs: Vec<&str> = REGION.iter().map(|r| r.0).collect();
    let mut regions: Vec<&str> = REGION.iter().map(|r| r.1).collect();
    regions.sort();
    regions.dedup();
    let mut region = [0u32; 16];
    for (i, r) in REGION.iter().enumerate() {
        region[i] = regions.iter().position(|x| *x == r.1).unwrap() as u32;
    }
    let region_size = (0..regions.len() as u32).map(|g| region.iter().filter(|&&x| x == g).count() as u32).collect();
    let mut dis: Vec<String> = Vec::new();
    let mut raw = Vec::new();
    for line in BufReader::new(std::fs::File::open(path).expect("frequency table")).lines() {
        let line = line.unwrap();
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != 7 || f[0] == "age" {
            continue;
        }
        raw.push((
            f[0].parse::<u32>().unwrap(),
            f[1] == "F",
            f[2].parse::<u32>().unwrap(),
            f[3].to_string(),
            f[4] == "Y",
            f[5].to_string(),
            f[6].parse::<u32>().unwrap(),
        ));
        dis.push(f[5].to_string());
    }
    dis.sort();
    dis.dedup();
    assert!(dis.len() <= W, "more diseases than the declared domain");
    let stroke = dis.iter().position(|d| d == "stroke").expect("stroke");
    let mut truth = [vec![0f64; 20], vec![0f64; 20]];
    let rows: Vec<Row> = raw
        .into_iter()
        .map(|(age, f, los, loc, y, d, n)| {
            let r = Row {
                age,
                sex: f as u32,
                los,
                loc: locs.iter().position(|x| *x == loc).expect("location") as u32,
                surg: y as u32,
                dis: dis.iter().position(|x| *x == d).unwrap() as u32,
                n,
            };
            if r.dis as usize == stroke && r.surg == 0 {
                truth[r.sex as usize][(age / 5) as usize] += n as f64;
            }
            r
        })
        .collect();
    let present = |t: &Vec<f64>| t.iter().enumerate().filter(|(_, &c)| c > 0.0).map(|(g, &c)| (g, c)).collect();
    Data { rows, region, region_size, stroke, truth: [present(&truth[0]), present(&truth[1])] }
}

/// NCP of a record at combination `c` (Eq. 5 averaged over the five attributes).
fn ncp(node: &Node, c: &[u32; 5], d: &Data) -> f64 {
    let l = &node.levels;
    let part = |leaves: u32, all: u32| if leaves <= 1 { 0.0 } else { leaves as f64 / all as f64 };
    let loc = match l[3] {
        0 => 0.0,
        1 => part(d.region_size[c[3] as usize], 16),
        _ => 1.0,
    };
    (part(AGE_W[l[0]], 100)
        + part(if l[1] == 0 { 1 } else { 2 }, 2)
        + part(LOS_W[l[2]], 360)
        + loc
        + part(if l[4] == 0 { 1 } else { 2 }, 2))
        / 5.0
}

/// The harness's estimate of stroke-without-surgery patients of `sex` per 5-year group from
/// `v` released stroke rows at combination `c`: uniform over the generalized values.
fn spread(node: &Node, c: &[u32; 5], v: f64, sex: u32, est: &mut [f64; 20]) {
    if v == 0.0 {
        return;
    }
    let l = &node.levels;
    let mut p = v;
    if l[1] == 0 {
        if c[1] != sex {
            return;
        }
    } else {
        p *= 0.5;
    }
    if l[4] == 0 {
        if c[4] != 0 {
            return;
        }
    } else {
        p *= 0.5;
    }
    let w = AGE_W[l[0]];
    let lo = c[0] * w;
    for age in lo..lo + w {
        est[(age / 5) as usize] += p / w as f64;
    }
}

fn are(est: &[f64; 20], truth: &[(usize, f64)]) -> f64 {
    truth.iter().map(|&(g, c)| (est[g] - c).abs() / c.max(1.0)).sum::<f64>() / truth.len() as f64
}

#[derive(Default, Clone, Copy)]
struct Outcome {
    ncp: f64,
    emd: f64,
    rate: f64,
    classes: f64,
    q: [f64; 2],
    q_no_counterfeit: [f64; 2],
}

/// One release of `node` (`classes`: combination index → histogram) and its measures.
/// `approx`: the stability-based histogram instead (empty cells never noised, `floor` is τ).
fn run(
    node: &Node,
    classes: &HashMap<u32, [u32; W]>,
    d: &Data,
    q: f64,
    floor: i64,
    approx: bool,
    rng: &mut Rng,
) -> Outcome {
    let ln_q = q.ln();
    let p_empty = if approx { 0.0 } else { q.powi(floor as i32) / (1.0 + q) }; // P(X >= T)
    let ln_skip = (1.0 - p_empty).ln();
    let empty_value = |rng: &mut Rng| floor + rng.geometric(ln_q); // X given X >= T
    let (mut ncp_sum, mut released, mut emd, mut rate, mut k) = (0.0, 0u64, 0.0, 0.0, 0u64);
    let mut est = [[0f64; 20]; 2];
    let mut est_nc = [[0f64; 20]; 2];
    let zero = [0u32; W];
    for idx in 0..node.combos() as u32 {
        let h = classes.get(&idx).unwrap_or(&zero);
        let n_r: u64 = h.iter().map(|&x| x as u64).sum();
        let mut r = [0i64; W];
        let mut empties = 0usize; // zero cells other than stroke
        for v in 0..W {
            if h[v] > 0 {
                let y = h[v] as i64 + rng.geometric(ln_q) - rng.geometric(ln_q);
                r[v] = if y >= floor { y } else { 0 };
            } else if v == d.stroke {
                r[v] = if rng.unit() <= p_empty { empty_value(rng) } else { 0 };
            } else {
                empties += 1;
            }
        }
        // Published zero cells among `empties`: geometric skips (binomial count).
        let mut s_e = 0i64;
        let mut pos = if approx { empties } else { 0 };
        while pos < empties {
            pos += (rng.unit().ln() / ln_skip).floor() as usize;
            if pos >= empties {
                break;
            }
            s_e += empty_value(rng);
            pos += 1;
        }
        let n_o = r.iter().sum::<i64>() + s_e;
        if n_r == 0 && n_o == 0 {
            continue;
        }
        k += 1;
        let c = node.decode(idx);
        ncp_sum += n_o as f64 * ncp(node, &c, d);
        released += n_o as u64;
        let stroke_real = h[d.stroke] as f64;
        for sex in 0..2 {
            spread(node, &c, r[d.stroke] as f64, sex, &mut est[sex as usize]);
            let real_only = if stroke_real > 0.0 { r[d.stroke] as f64 } else { 0.0 };
            spread(node, &c, real_only, sex, &mut est_nc[sex as usize]);
        }
        if n_r == 0 || n_o == 0 {
            emd += 1.0;
            rate += if n_o == 0 { 0.0 } else { 1.0 };
            continue;
        }
        let (nr, no) = (n_r as f64, n_o as f64);
        let mut dist = s_e as f64 / no;
        let mut counterfeit = s_e;
        for v in 0..W {
            dist += (h[v] as f64 / nr - r[v] as f64 / no).abs();
            counterfeit += (r[v] - h[v] as i64).max(0);
        }
        emd += 0.5 * dist;
        rate += counterfeit as f64 / no;
    }
    let kf = k.max(1) as f64;
    Outcome {
        ncp: if released == 0 { 1.0 } else { ncp_sum / released as f64 },
        emd: emd / kf,
        rate: rate / kf,
        classes: k as f64,
        q: [are(&est[0], &d.truth[0]), are(&est[1], &d.truth[1])],
        q_no_counterfeit: [are(&est_nc[0], &d.truth[0]), are(&est_nc[1], &d.truth[1])],
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let d = load(&args[1]);
    let eps: f64 = args[2].parse().unwrap();
    // `tau27`: approx with threshold 27 (no empty cell noised); otherwise pure floors.
    let approx = args[3].starts_with("tau");
    let floors: Vec<i64> = args[3].trim_start_matches("tau").split(',').map(|t| t.parse().unwrap()).collect();
    let runs: u64 = args[4].parse().unwrap();
    let nodes: Vec<[usize; 5]> = match args.get(5).map(|s| s.as_str()) {
        None | Some("all") => {
            let mut v = Vec::new();
            for a in 0..5 {
                for s in 0..2 {
                    for l in 0..6 {
                        for lo in 0..3 {
                            for su in 0..2 {
                                v.push([a, s, l, lo, su]);
                            }
                        }
                    }
                }
            }
            v
        }
        Some(list) => list
            .split(';')
            .map(|n| {
                let x: Vec<usize> = n.split(',').map(|t| t.trim().parse().unwrap()).collect();
                [x[0], x[1], x[2], x[3], x[4]]
            })
            .collect(),
    };
    let q = (-eps).exp();
    println!("node\tT\tcells\treal_classes\tclasses\tNCP\tEMD\tRate\tIL\tQ1\tQ2\tQ1_gen\tQ2_gen\tQ1_no_cf\tQ2_no_cf");
    for levels in nodes {
        let node = Node::new(levels);
        let cells = node.combos() * W as u64;
        if cells > MAX_CELLS {
            continue;
        }
        let mut classes: HashMap<u32, [u32; W]> = HashMap::new();
        for r in &d.rows {
            classes.entry(node.index(&node.codes(r, &d.region))).or_insert([0; W])[r.dis as usize] += r.n;
        }
        // Generalization alone: the exact counts at the node through the harness.
        let mut exact = [[0f64; 20]; 2];
        for (&idx, h) in &classes {
            let c = node.decode(idx);
            for sex in 0..2 {
                spread(&node, &c, h[d.stroke] as f64, sex, &mut exact[sex as usize]);
            }
        }
        let q_gen = [are(&exact[0], &d.truth[0]), are(&exact[1], &d.truth[1])];
        for &t in &floors {
            let mut acc = Outcome::default();
            for s in 0..runs {
                let mut rng = Rng(0x5EED ^ (s * 1_000_003) ^ ((t as u64) << 40));
                let o = run(&node, &classes, &d, q, t, approx, &mut rng);
                acc.ncp += o.ncp;
                acc.emd += o.emd;
                acc.rate += o.rate;
                acc.classes += o.classes;
                for i in 0..2 {
                    acc.q[i] += o.q[i];
                    acc.q_no_counterfeit[i] += o.q_no_counterfeit[i];
                }
            }
            let m = |x: f64| x / runs as f64;
            println!(
                "{:?}\t{t}\t{cells}\t{}\t{:.0}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}",
                levels,
                classes.len(),
                m(acc.classes),
                m(acc.ncp),
                m(acc.emd),
                m(acc.rate),
                m(acc.ncp + acc.emd + acc.rate),
                m(acc.q[0]),
                m(acc.q[1]),
                q_gen[0],
                q_gen[1],
                m(acc.q_no_counterfeit[0]),
                m(acc.q_no_counterfeit[1]),
            );
        }
    }
}
