//! `generalize(source, output, node [, 'keep_insensitive=true'])`: release `source` generalized
//! at a lattice node chosen by hand (`'1,0,2,...'`, one level per quasi-identifier in
//! declaration order), as ARX lets a custodian pick a node. Registers the release as `output`
//! and returns it. Insensitive columns are left out unless kept.

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use crate::encode::{check_sensitive_not_null, frequency_table_of, materialize_node};
use crate::error::{AnonError, Result};
use crate::lattice::parse_levels;
use crate::methods::contract::{Release, Rows};
use crate::methods::options::{Kind, Options, opt};
use crate::session::runtime::block_on_cancellable;

#[derive(Debug)]
pub(crate) struct Generalize;

/// `generalize`'s options.
const OPTIONS: Options = Options {
    function: "generalize",
    specs: &[opt(
        "keep_insensitive",
        Kind::Flag,
        "false",
        "publish the columns declared insensitive too, not only the quasi-identifiers and the sensitive attribute",
    )],
};

impl MethodSpec for Generalize {
    /// The node's levels, and whether insensitive columns are kept.
    type Params = (Vec<u8>, bool);
    const NAME: &'static str = "generalize";
    const SIGNATURE: &'static str = "generalize(source, output, 'l1,l2,...' [, options])";
    const OPTIONS: Option<&'static Options> = Some(&OPTIONS);
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<(Vec<u8>, bool)> {
        let node = a.str(2, "node")?;
        let levels = parse_levels(&node).ok_or_else(|| {
            AnonError::argument(Self::NAME, "node", format!("'{node}' is not a list of levels such as '1,0,2'"))
        })?;
        let options = OPTIONS.parse(&a.opt_str(3, "options")?.unwrap_or_default())?;
        Ok((levels, options.flag("keep_insensitive").unwrap_or(false)))
    }

    fn deterministic(&self, _: &(Vec<u8>, bool)) -> bool {
        true
    }

    fn side_tables(&self, _: &(Vec<u8>, bool)) -> Vec<&'static str> {
        Vec::new()
    }

    fn run(&self, call: &Call<'_>, (levels, keep): &(Vec<u8>, bool)) -> Result<Outputs> {
        let source = call.read()?;
        let rows = block_on_cancellable(call.registry.progress().as_ref(), async {
            // The frequency table encodes every quasi-identifier through its hierarchy: a value
            // the hierarchy does not cover (data changed since it was loaded) is an error here,
            // as in every other method, instead of a NULL in the release.
            frequency_table_of(&source, None).await?;
            check_sensitive_not_null(&source, None).await?;
            materialize_node(&source, levels, *keep)
        })?;
        call.publish(Self::NAME, Release::bare(Rows::Plan(rows)))
    }
}
