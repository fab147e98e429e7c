//! `arbor get` and `arbor ls`: reading values and directories of a commit's tree.

use std::io::Write;

use arbor::{Kind, Step, Tree};
use clap::Args;

use crate::common::{parse_path, resolve_commit, show_path, StoreArg};
use crate::error::{CliError, CliResult};
use crate::hex;
use crate::rev::{parse_rev, Rev};

/// The commit and path a read command looks at, shared by `get` and `ls`.
#[derive(Args, Debug)]
struct Target {
    #[command(flatten)]
    store: StoreArg,
    /// Commit to read (a head name, a hash or unique hash prefix, or REV~N); default: head `main`, else the last commit.
    #[arg(long, value_name = "REV", value_parser = parse_rev)]
    commit: Option<Rev>,
}

impl Target {
    /// Opens the store read-only and checks out the commit's tree.
    fn tree(&self) -> CliResult<Tree> {
        let store = self.store.open_read_only()?;
        let hash = resolve_commit(&store, self.commit.as_ref())?;
        Ok(store.checkout(&hash)?)
    }
}

/// Arguments of `arbor get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    #[command(flatten)]
    target: Target,
    /// Print the value as raw text instead of hex.
    #[arg(long)]
    text: bool,
    /// `/`-separated path of the value.
    path: String,
}

impl GetArgs {
    /// Prints the value at the path, in hex or as text, followed by a newline.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let path = parse_path(&self.path)?;
        let tree = self.target.tree()?;
        let Some(value) = tree.find(&path)? else {
            return Err(missing(&tree, &path)?);
        };
        if self.text {
            // Raw bytes, not a lossy conversion: a value that is not UTF-8 still
            // comes out byte-for-byte.
            out.write_all(&value)?;
            out.write_all(b"\n")?;
        } else {
            writeln!(out, "{}", hex::encode(&value))?;
        }
        Ok(())
    }
}

/// The not-found error for a path holding no value, saying whether a directory is there.
fn missing(tree: &Tree, path: &[Step]) -> CliResult<CliError> {
    let shown = show_path(path);
    Ok(if tree.mem_tree(path)? {
        CliError::failed(format!("{shown} is a directory, not a value"))
    } else {
        CliError::failed(format!("no value at {shown}"))
    })
}

/// Arguments of `arbor ls`.
#[derive(Args, Debug)]
#[command(after_help = "Prints one child a line: `NAME/` for a directory, `NAME<TAB>SIZE` for a value.")]
pub struct LsArgs {
    #[command(flatten)]
    target: Target,
    /// Skip this many children first.
    #[arg(long, value_name = "N")]
    offset: Option<usize>,
    /// List at most this many children.
    #[arg(long, value_name = "N")]
    length: Option<usize>,
    /// `/`-separated path of the directory; default: the root.
    #[arg(default_value = "")]
    path: String,
}

impl LsArgs {
    /// Lists the children of the directory at the path, in storage order.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let path = parse_path(&self.path)?;
        let tree = self.target.tree()?;
        let Some(sub) = tree.find_tree(&path)? else {
            return Err(CliError::failed(format!("nothing at {}", show_path(&path))));
        };
        if sub.kind() == Kind::Value {
            // Like `ls FILE`: a value lists as itself.
            let name = path.last().map_or_else(String::new, |s| show_path(std::slice::from_ref(s)));
            return print_child(out, &name, &sub);
        }
        let root: [Step; 0] = [];
        for (step, child) in sub.list(&root, self.offset, self.length)? {
            print_child(out, &show_path(std::slice::from_ref(&step)), &child)?;
        }
        Ok(())
    }
}

/// One line of `ls`: a directory with a `/` suffix, a value with its size in bytes.
fn print_child(out: &mut dyn Write, name: &str, child: &Tree) -> CliResult {
    match child.kind() {
        Kind::Dir => writeln!(out, "{name}/")?,
        Kind::Value => {
            let size = child.to_value()?.map_or(0, |v| v.len());
            writeln!(out, "{name}\t{size}")?;
        }
    }
    Ok(())
}
