//! The exact DP samplers against their stated distributions: chi-square goodness of fit with a
//! fixed seed (so a run is deterministic) and a critical value at p = 1e-4 (so a correct sampler
//! would fail for a random seed once in 10,000), plus the likelihood-ratio bound of DP itself.
//! Run with `--nocapture` to see the statistics.

mod common;

use anonfusion::dp::{DiscreteLaplace, ExponentialMechanism, bernoulli_exp_neg, dp_rng};
use common::{assert_fits, chi_square, critical_value};
use rand::{Rng, RngExt, SeedableRng, rngs::StdRng};
use std::collections::BTreeMap;

/// Counts of draws over the categories (x < -m, -m..=m, x > m) with the matching pmf.
fn laplace_table(d: &DiscreteLaplace, draws: &[i64], m: i64) -> (Vec<u64>, Vec<f64>) {
    let mut counts = vec![0u64; (2 * m + 3) as usize];
    for &x in draws {
        counts[(x.clamp(-m - 1, m + 1) + m + 1) as usize] += 1;
    }
    let mut probs: Vec<f64> = (-m - 1..=m + 1).map(|x| d.pmf(x)).collect();
    // Each tail: sum over |x| > m of the pmf = q^(m+1) / (1 + q).
    let tail = d.q().powi(m as i32 + 1) / (1.0 + d.q());
    (probs[0], probs[(2 * m + 2) as usize]) = (tail, tail);
    (counts, probs)
}

fn laplace_draws(d: &DiscreteLaplace, seed: u64, n: usize) -> Vec<i64> {
    let mut rng = dp_rng(Some(seed)).unwrap();
    (0..n).map(|_| d.sample(&mut rng)).collect()
}

#[test]
fn chi_square_helper_is_calibrated_and_has_power() {
    // Wilson–Hilferty against tabulated critical values at p = 1e-4.
    for (df, table) in [(5, 25.745), (10, 35.564), (30, 67.633), (100, 161.319)] {
        let c = critical_value(df);
        assert!((c - table).abs() < 0.03 * table, "df {df}: {c} vs {table}");
    }
    // Draws at eps = 0.5 tested against the pmf for eps = 0.55 must be rejected.
    let d = DiscreteLaplace::for_epsilon(0.5, 1).unwrap();
    let wrong = DiscreteLaplace::for_epsilon(0.55, 1).unwrap();
    let draws = laplace_draws(&d, 11, 200_000);
    let (counts, _) = laplace_table(&d, &draws, 30);
    let (_, probs) = laplace_table(&wrong, &draws, 30);
    let (stat, df) = chi_square(&counts, &probs);
    eprintln!("wrong scale: chi2 = {stat:.1}, df = {df}, critical = {:.2}", critical_value(df));
    assert!(stat > 10.0 * critical_value(df));
}

#[test]
fn discrete_laplace_fits_its_pmf_mean_and_variance() {
    let n = 200_000;
    for (i, (eps, sensitivity)) in [(0.1, 1), (0.5, 1), (2.0, 1), (1.0, 3)].into_iter().enumerate() {
        let d = DiscreteLaplace::for_epsilon(eps, sensitivity).unwrap();
        let draws = laplace_draws(&d, 100 + i as u64, n);
        // Cover the bulk: 8 scales each side (tail mass e^-8 ~ 3e-4 per side).
        let (t, s) = d.scale();
        let m = (8 * t / s).max(3) as i64;
        let (counts, probs) = laplace_table(&d, &draws, m);
        assert_fits(&format!("discrete Laplace eps={eps} sens={sensitivity}"), &counts, &probs);

        let nf = n as f64;
        let mean = draws.iter().sum::<i64>() as f64 / nf;
        let var = draws.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (nf - 1.0);
        let sigma2 = d.variance();
        let bound = 60 * t as i64 / s as i64 + 50;
        let mu4: f64 = (-bound..=bound).map(|x| (x as f64).powi(4) * d.pmf(x)).sum();
        let (se_mean, se_var) = ((sigma2 / nf).sqrt(), ((mu4 - sigma2 * sigma2) / nf).sqrt());
        eprintln!("  mean {mean:.4} (se {se_mean:.4}), variance {var:.3} vs {sigma2:.3} (se {se_var:.3})");
        assert!(mean.abs() < 5.0 * se_mean, "eps {eps}: mean {mean}");
        assert!((var - sigma2).abs() < 5.0 * se_var, "eps {eps}: variance {var} vs {sigma2}");
    }
}

#[test]
fn bernoulli_exp_neg_frequencies_within_five_sigma() {
    let n = 200_000u32;
    let mut rng = dp_rng(Some(3)).unwrap();
    let gammas = [(0u64, 1u64), (1, 4), (1, 2), (1, 1), (3, 2), (7, 3), (5, 1), (10, 1), (123_456_789, 100_000_000)];
    for (num, den) in gammas {
        let p = (-(num as f64) / den as f64).exp();
        let hits = (0..n).filter(|_| bernoulli_exp_neg(&mut rng, num, den).unwrap()).count();
        let f = hits as f64 / n as f64;
        let sigma = (p * (1.0 - p) / n as f64).sqrt();
        eprintln!("Bernoulli(exp(-{num}/{den})): {f:.5} vs {p:.5} ({:+.2} sigma)", (f - p) / sigma.max(1e-300));
        if num == 0 {
            assert_eq!(hits, n as usize, "gamma = 0 must always succeed");
        } else {
            assert!((f - p).abs() <= 5.0 * sigma, "gamma {num}/{den}: {f} vs {p}");
        }
    }
}

#[test]
fn exponential_mechanism_choices_fit_probabilities() {
    // IPA Eq. 3 scores of one class: counts (5, 3, 0, 0, 2) of 10 records, 2 absent values.
    let ipa: Vec<f64> =
        [5.0, 3.0, 0.0, 0.0, 2.0].iter().map(|&c| if c > 0.0 { c / 11.0 } else { 1.0 / 22.0 }).collect();
    let cases: [(&str, Vec<f64>, f64, f64); 4] = [
        ("linear", vec![1.0, 2.0, 3.0, 4.0], 1.0, 1.0),
        ("ties", vec![0.5, 0.5, 0.5, 0.2, 0.2, 0.9, 0.9], 2.0, 0.1),
        ("wide spread", vec![0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 100.5, 101.0], 1.0, 1.0),
        ("IPA Eq. 3 scores", ipa, 1.0, 1.0),
    ];
    let n = 200_000;
    for (i, (name, utilities, eps, sens)) in cases.into_iter().enumerate() {
        let m = ExponentialMechanism::new(&utilities, eps, sens).unwrap();
        let mut rng = dp_rng(Some(40 + i as u64)).unwrap();
        let mut counts = vec![0u64; utilities.len()];
        for _ in 0..n {
            counts[m.sample(&mut rng)] += 1;
        }
        let probs = m.probabilities();
        assert_fits(&format!("exponential mechanism, {name}"), &counts, &probs);
        if name == "ties" {
            // Equal utilities, equal probabilities, exactly.
            assert!(probs[0] == probs[1] && probs[1] == probs[2] && probs[5] == probs[6]);
        }
    }
}

#[test]
fn neighbouring_counts_have_likelihood_ratio_within_e_eps() {
    let d = DiscreteLaplace::for_epsilon(1.0, 1).unwrap();
    let eps = d.epsilon(1);
    let n = 400_000;
    let tally = |count: i64, seed: u64| {
        let mut hist = BTreeMap::<i64, u64>::new();
        for x in laplace_draws(&d, seed, n) {
            *hist.entry(count + x).or_default() += 1;
        }
        hist
    };
    let (a, b) = (tally(50, 1), tally(51, 2));
    let mut worst: f64 = 0.0;
    let mut compared = 0;
    for (v, &ca) in &a {
        let Some(&cb) = b.get(v) else { continue };
        if ca < 1_000 || cb < 1_000 {
            continue; // too little mass for a meaningful ratio
        }
        let log_ratio = (ca as f64 / cb as f64).ln();
        let se = (1.0 / ca as f64 + 1.0 / cb as f64).sqrt();
        assert!(log_ratio.abs() <= eps + 5.0 * se, "value {v}: |ln ratio| {:.3} > eps {eps} + 5 se {se:.3}", log_ratio);
        worst = worst.max(log_ratio.abs() - 5.0 * se);
        compared += 1;
    }
    eprintln!("neighbours 50/51 at eps {eps}: {compared} values compared, max |ln ratio| - 5se = {worst:.3}");
    assert!(compared >= 10);
    // The bound is attained (every value away from the two counts has ratio exactly e^eps):
    // the noise is not wider than it needs to be.
    assert!(worst > 0.8 * eps, "{worst}");
}

#[test]
fn exponential_mechanism_neighbouring_utilities_ratio_within_e_eps() {
    // Deterministic check of the privacy claim on the realized (quantized) mechanism: move every
    // utility by at most the sensitivity, including the worst case of +-sensitivity.
    let mut rng = StdRng::seed_from_u64(8);
    let mut worst: f64 = 0.0;
    for trial in 0..500 {
        let sens = [1.0, 0.1, 3.0 / 1001.0, 1e-6][trial % 4];
        let eps = [0.1, 1.0, 2.5][trial % 3];
        let k = rng.random_range(2..12);
        let u: Vec<f64> = (0..k).map(|_| rng.random_range(-20.0..20.0) * sens).collect();
        let moved: Vec<f64> = u
            .iter()
            .map(|x| match rng.random_range(0..3) {
                0 => x + sens,
                1 => x - sens,
                _ => x + rng.random_range(-1.0..1.0) * sens,
            })
            .collect();
        let m = ExponentialMechanism::new(&u, eps, sens).unwrap();
        let p = m.probabilities();
        let p2 = ExponentialMechanism::new(&moved, eps, sens).unwrap().probabilities();
        for (a, b) in p.iter().zip(&p2) {
            if *a > 1e-250 && *b > 1e-250 {
                let r = (a / b).ln().abs();
                assert!(r <= m.epsilon() + 1e-9, "trial {trial}: ln ratio {r} > eps' {}", m.epsilon());
                worst = worst.max(r / m.epsilon());
            }
        }
    }
    eprintln!("exponential mechanism: max ln ratio / eps' over 500 neighbour pairs = {worst:.4}");
}

#[test]
fn same_seed_same_draws_and_unseeded_streams_differ() {
    let d = DiscreteLaplace::for_epsilon(0.3, 1).unwrap();
    let m = ExponentialMechanism::new(&[0.1, 0.2, 0.3, 0.4], 1.0, 0.1).unwrap();
    let run = |rng: &mut StdRng| -> (Vec<i64>, Vec<usize>) {
        ((0..200).map(|_| d.sample(rng)).collect(), (0..200).map(|_| m.sample(rng)).collect())
    };
    let first = run(&mut dp_rng(Some(2024)).unwrap());
    assert_eq!(first, run(&mut dp_rng(Some(2024)).unwrap()));
    assert_ne!(first, run(&mut dp_rng(Some(2025)).unwrap()));
    let (mut x, mut y) = (dp_rng(None).unwrap(), dp_rng(None).unwrap());
    let stream = |r: &mut StdRng| (0..4).map(|_| r.next_u64()).collect::<Vec<_>>();
    assert_ne!(stream(&mut x), stream(&mut y));
}
