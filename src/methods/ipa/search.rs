//! Algorithm 2: perturb every node of the lattice (Algorithm 1), score it by IL, and choose
//! the released node with the exponential mechanism of Eq. 12 (utility u = 3 − IL, Δu = 3).
//!
//! Every node is scored through the search driver's traversal of every node
//! ([`driver::every`]), grouped depth-first on all cores, each rolled up from a direct
//! specialization ([`EveryNode`]). Each node draws from its own stream of the call's key
//! (`StreamKey::stream(node)`), so its perturbation, and with it the chosen node, do not depend
//! on the order or the thread in which nodes are evaluated. Only the scores are kept: the
//! chosen node's perturbation is drawn again from its stream for the release.
//!
//! No bound prunes this traversal, unlike kanon's and hceil's on the same driver:
//! the mechanism's probabilities are normalized over every node's utility, so each node must
//! be scored for the draw to be the mechanism's (a node left out would change every
//! probability, and with it the privacy guarantee).

use super::perturb::{Noise, Perturbation, perturb};
use super::score::{IL_SENSITIVITY, Loss, loss};
use crate::dp::{ExponentialMechanism, StreamKey};
use crate::encode::{Cached, EveryNode, NodeCache};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::lattice::{NodeId, search as driver};
use crate::progress::Progress;
use rand::Rng;
use std::sync::Arc;

/// Stream of the node choice (Eq. 12); node streams use the node ids, which are below it.
pub const CHOICE_STREAM: u64 = u64::MAX;

/// One node's perturbation, summarized.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeScore {
    pub node: NodeId,
    /// The node's generalization level per dimension attribute.
    pub(crate) levels: Vec<u8>,
    pub loss: Loss,
    suppressed_records: u64,
    withheld_records: u64,
    counterfeit_records: u64,
}

/// Algorithm 1 on one node with its own stream.
pub fn perturb_node(
    cached: &Cached,
    width: usize,
    noise: &Noise,
    key: &StreamKey,
    node: NodeId,
) -> Result<Perturbation> {
    perturb(cached, width, noise, &mut key.stream(node as u64))
}

/// Lines 2–5: every node perturbed and scored, in node-id order.
pub(crate) fn score_all(
    nodes: &mut NodeCache,
    noise: &Noise,
    key: &StreamKey,
    progress: &dyn Progress,
) -> Result<Vec<NodeScore>> {
    let lattice = nodes.lattice.clone();
    let hs: Vec<Arc<Hierarchy>> = nodes.hierarchies().to_vec();
    let width = nodes.width();
    progress.begin("IPA: perturbing and scoring the lattice", lattice.size() as u64);
    // Every node is scored; each draws from its own stream, so the walk's order and threads
    // change nothing.
    let f = |node: NodeId, c: &Cached| {
        let p = perturb_node(c, width, noise, key, node)?;
        Ok(NodeScore {
            node,
            levels: c.g.levels.clone(),
            loss: loss(&hs, &c.g, &p),
            suppressed_records: p.suppressed_records,
            withheld_records: p.withheld_records,
            counterfeit_records: p.counterfeit_records,
        })
    };
    let scored = driver::every(&lattice, &mut EveryNode { cache: nodes, progress, f }, |_| true)?;
    progress.finish();
    Ok(scored.into_iter().map(|(_, s)| s).collect())
}

/// The mechanism of Eq. 12 over the scored nodes.
pub(crate) fn choice_mechanism(scores: &[NodeScore], epsilon_candidates: f64) -> Result<ExponentialMechanism> {
    let utilities: Vec<f64> = scores.iter().map(|s| s.loss.utility()).collect();
    ExponentialMechanism::new(&utilities, epsilon_candidates, IL_SENSITIVITY)
}

/// Line 6: the index (into `scores`) of the chosen node.
pub fn choose<R: Rng + ?Sized>(scores: &[NodeScore], epsilon_candidates: f64, rng: &mut R) -> Result<usize> {
    Ok(choice_mechanism(scores, epsilon_candidates)?.sample(rng))
}
