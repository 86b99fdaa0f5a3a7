//! `generalize(source, output, node)`: release `source` generalized at a lattice node chosen
//! by hand (`'1,0,2,...'`, one level per quasi-identifier in declaration order), as ARX lets a
//! custodian pick a node. Registers the release as `output` and returns it.

use super::method::{Call, MethodSpec, Outputs};
use super::{Args, output};
use crate::encode::materialize_node;
use crate::error::{AnonError, Result};
use crate::lattice::parse_levels;

#[derive(Debug)]
pub struct Generalize;

impl MethodSpec for Generalize {
    /// The node's levels.
    type Params = Vec<u8>;
    const NAME: &'static str = "generalize";
    const SIGNATURE: &'static str = "generalize(source, output, 'l1,l2,...')";
    const ARITY: (usize, usize) = (3, 3);

    fn parse(&self, a: &Args) -> Result<Vec<u8>> {
        let node = a.str(2, "node")?;
        parse_levels(&node).ok_or_else(|| {
            AnonError::argument(Self::NAME, "node", format!("'{node}' is not a list of levels such as '1,0,2'"))
        })
    }

    fn deterministic(&self, _: &Vec<u8>) -> bool {
        true
    }

    fn side_tables(&self, _: &Vec<u8>) -> Vec<&'static str> {
        Vec::new()
    }

    fn run(&self, call: &Call<'_>, levels: &Vec<u8>) -> Result<Outputs> {
        let release = call.block_on(async {
            let df = materialize_node(call.ctx, call.source, call.meta, levels).await?;
            output::publish(call.ctx, call.output, df).await
        })?;
        Ok(Outputs::new(release))
    }
}
