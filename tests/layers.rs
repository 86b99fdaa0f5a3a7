//! The crate's import graph, read from its source: no file imports, directly or in a circle,
//! one that imports it back, and no module imports from a layer below its own. The layers are
//! the table in docs/architecture.md ("## Layers"), read from there, so the document and the
//! check cannot disagree.
//!
//! A file depends on another when it names one of its items: in a `use` declaration (`crate::`,
//! `super::`, `self::` or a child module's name), or in a path in its code. Comments, string
//! literals and test code (a `#[cfg(test)]` module, inline or in its own file) are not read;
//! `mod child;` alone is no dependency, and neither is a file's use of an enclosing folder's
//! own items (`super::Thing` defined in the folder's mod.rs): a folder contains its files, the
//! vocabulary its mod.rs defines is theirs. Everything else counts, a mod.rs using or
//! re-exporting its own files included. `src/lib.rs` (the crate root, which only declares and
//! re-exports) and the binaries are above every layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path inside the crate (`["methods", "ipa", "call"]`); the crate root is empty.
type Module = Vec<String>;

/// Every library source file under `src/` as (module path, text), test-only files left out.
fn read_sources(root: &Path) -> BTreeMap<Module, String> {
    let mut files = BTreeMap::new();
    walk(root, &mut Vec::new(), &mut files);
    let test_only: Vec<Module> = files
        .iter()
        .flat_map(|(m, text)| test_modules(text).into_iter().map(move |child| [m.clone(), vec![child]].concat()))
        .collect();
    files.retain(|m, _| !test_only.iter().any(|t| m.starts_with(t)));
    files
}

fn walk(dir: &Path, prefix: &mut Vec<String>, out: &mut BTreeMap<Module, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if prefix.is_empty() && name == "bin" {
                continue;
            }
            prefix.push(name);
            walk(&path, prefix, out);
            prefix.pop();
        } else if path.extension().is_some_and(|e| e == "rs") {
            if prefix.is_empty() && (name == "main" || name == "lib") {
                continue;
            }
            let mut module = prefix.clone();
            if name != "mod" {
                module.push(name);
            }
            out.insert(module, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// Children declared `#[cfg(test)] mod name;` in their own file.
fn test_modules(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]" && w[1].ends_with(';'))
        .filter_map(|w| {
            w[1].trim_start_matches("pub(crate) ").strip_prefix("mod ").map(|n| n.trim_end_matches(';').to_string())
        })
        .collect()
}

/// `text` without comments, literals' contents and inline `#[cfg(test)] mod ... { }` blocks.
fn code_of(text: &str) -> String {
    let stripped = strip_comments_and_literals(text);
    let mut out = String::with_capacity(stripped.len());
    let mut rest = stripped.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_inline_mod = (trimmed.starts_with("mod ") || trimmed.starts_with("pub(crate) mod "))
            && trimmed.find('{').is_some_and(|b| trimmed.find(';').is_none_or(|s| b < s));
        if !is_inline_mod {
            rest = after;
            continue;
        }
        let open = after.find('{').unwrap();
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn strip_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < chars.len()
                && !(chars[i] == '"' && chars[i + 1..].iter().take(hashes).filter(|&&h| h == '#').count() == hashes)
            {
                i += 1;
            }
            i += 1 + hashes;
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Every path the code names: the leaves of its `use` trees and the `a::b::c` paths in its
/// body, as segment lists (`{` groups expanded).
fn paths_named(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let tokens = tokenize(code);
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "use" {
            let end = tokens[i..].iter().position(|t| t == ";").map_or(tokens.len(), |p| i + p);
            expand_use(&tokens[i + 1..end], &mut Vec::new(), &mut paths);
            i = end;
        } else if is_ident(&tokens[i]) && tokens.get(i + 1).is_some_and(|t| t == "::") {
            let mut path = vec![tokens[i].clone()];
            let mut j = i + 1;
            while tokens.get(j).is_some_and(|t| t == "::") && tokens.get(j + 1).is_some_and(|t| is_ident(t)) {
                path.push(tokens[j + 1].clone());
                j += 2;
            }
            paths.push(path);
            i = j;
        } else {
            i += 1;
        }
    }
    paths
}

fn tokenize(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push("::".into());
            i += 2;
        } else {
            if !c.is_whitespace() {
                tokens.push(c.to_string());
            }
            i += 1;
        }
    }
    tokens
}

fn is_ident(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The leaf paths of a `use` tree (`a::{b, c::d as e}` → `a::b`, `a::c::d`).
fn expand_use(tokens: &[String], prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut i = 0;
    let depth_at_start = prefix.len();
    while i < tokens.len() {
        let t = &tokens[i];
        if t == "{" {
            let mut depth = 0;
            let mut start = i + 1;
            for j in i..tokens.len() {
                match tokens[j].as_str() {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            expand_use(&tokens[start..j], prefix, out);
                            break;
                        }
                    }
                    "," if depth == 1 => {
                        expand_use(&tokens[start..j], prefix, out);
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            prefix.truncate(depth_at_start);
            return;
        } else if t == "as" {
            break;
        } else if is_ident(t) && t != "pub" && t != "crate" || t == "crate" && prefix.is_empty() {
            prefix.push(t.clone());
        }
        i += 1;
    }
    if prefix.len() > depth_at_start {
        out.push(prefix.clone());
    }
    prefix.truncate(depth_at_start);
}

/// The module file a path from `module` names, if it names one inside the crate.
fn target(module: &Module, path: &[String], files: &BTreeMap<Module, String>) -> Option<Module> {
    let mut base: Module;
    let mut rest = path;
    match path.first()?.as_str() {
        "crate" => {
            base = Vec::new();
            rest = &path[1..];
        }
        "self" => {
            base = module.clone();
            rest = &path[1..];
        }
        "super" => {
            base = module.clone();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        first => {
            // A child module named without a prefix.
            let child = [module.clone(), vec![first.to_string()]].concat();
            if !files.contains_key(&child) {
                return None;
            }
            base = module.clone();
        }
    }
    // A path that stops at a module file names an item of that file (`super::Thing`).
    let mut found = (!base.is_empty() && files.contains_key(&base)).then(|| base.clone());
    for segment in rest {
        base.push(segment.clone());
        if files.contains_key(&base) {
            found = Some(base.clone());
        } else {
            break;
        }
    }
    found.filter(|m| m != module)
}

/// Which module files each file depends on.
fn dependencies(files: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    files
        .iter()
        .map(|(m, text)| {
            let deps = paths_named(&code_of(text))
                .iter()
                .filter_map(|p| target(m, p, files))
                .filter(|t| !m.starts_with(t))
                .collect();
            (m.clone(), deps)
        })
        .collect()
}

/// The strongly connected components of more than one file (Tarjan).
fn circles(deps: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        deps: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.deps.get(v).into_iter().flatten() {
            let Some((w, _)) = s.deps.get_key_value(w) else { continue };
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(lw));
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        deps,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in deps.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The layer of each top-level module, from the code block under "## Layers" in
/// `architecture`: one layer per line whose names start at the margin (`encode, lattice, dp  ...`),
/// the first line the lowest; indented lines continue a description.
fn layers(architecture: &str) -> BTreeMap<String, usize> {
    let section =
        &architecture[architecture.find("## Layers").expect("docs/architecture.md has a \"## Layers\" section")..];
    let block = section.split("```").nth(1).expect("the layers section holds a code block");
    let mut rank = BTreeMap::new();
    for (layer, line) in block.lines().filter(|l| l.starts_with(' ') && !l.starts_with("  ")).enumerate() {
        let names = line.trim_start().split("  ").next().unwrap();
        for name in names.split(',') {
            rank.insert(name.trim().trim_end_matches("/*").to_string(), layer);
        }
    }
    rank
}

fn module_name(m: &Module) -> String {
    m.join("::")
}

/// What is wrong with the graph: circles, imports from a lower layer, modules with no layer.
fn problems(files: &BTreeMap<Module, String>, rank: &BTreeMap<String, usize>) -> Vec<String> {
    let deps = dependencies(files);
    let mut out = Vec::new();
    for circle in circles(&deps) {
        let edges: Vec<String> = circle
            .iter()
            .flat_map(|a| {
                deps[a]
                    .iter()
                    .filter(|b| circle.contains(b))
                    .map(move |b| format!("{} -> {}", module_name(a), module_name(b)))
            })
            .collect();
        out.push(format!("import circle: {}", edges.join(", ")));
    }
    for (a, targets) in &deps {
        let Some(&ra) = rank.get(&a[0]) else {
            out.push(format!("{}: module '{}' has no layer in docs/architecture.md", module_name(a), a[0]));
            continue;
        };
        for b in targets {
            if rank.get(&b[0]).is_some_and(|&rb| rb > ra) {
                out.push(format!("{} imports {}, from a layer below its own", module_name(a), module_name(b)));
            }
        }
    }
    out
}

#[test]
fn the_import_graph_has_no_circle_and_every_import_comes_from_a_layer_above() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = read_sources(&root.join("src"));
    assert!(files.len() > 100, "read {} files", files.len());
    let rank = layers(&std::fs::read_to_string(root.join("docs/architecture.md")).unwrap());
    let found = problems(&files, &rank);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The check itself finds what it must: a planted circle (through `super::`, a child's name and
/// a `use` group), an import from a lower layer, an unlisted module; and it reads neither
/// comments, strings nor test modules.
#[test]
fn the_check_finds_planted_circles_and_upward_imports() {
    let file = |m: &str, text: &str| (m.split("::").map(String::from).collect::<Module>(), text.to_string());
    let rank =
        layers("## Layers\n```\n error, meta\n hierarchy   trees\n            more text\n methods/*   papers\n```\n");
    assert_eq!(rank["error"], 0);
    assert_eq!(rank["hierarchy"], 1);
    assert_eq!(rank["methods"], 2);
    let clean: BTreeMap<Module, String> = [
        file("error", "// use crate::methods::a;\nconst S: &str = \"crate::methods::a::X\";"),
        file("hierarchy", "use crate::error::{self, Result as R};"),
        file("methods", "pub mod a; pub mod b; pub use a::X; pub struct Shared;"),
        file("methods::a", "use super::b::Thing; use super::Shared; fn f() { crate::hierarchy::g() }"),
        file("methods::b", "#[cfg(test)]\nmod tests { use super::super::a::X; }"),
    ]
    .into_iter()
    .collect();
    assert_eq!(problems(&clean, &rank), Vec::<String>::new());
    let mut circle = clean.clone();
    circle.insert(vec!["methods".into(), "b".into()], "use crate::methods::{a::X, self};".into());
    let found = problems(&circle, &rank);
    assert_eq!(found, vec!["import circle: methods::a -> methods::b, methods::b -> methods::a".to_string()]);
    let mut upward = clean.clone();
    upward.insert(vec!["hierarchy".into()], "fn f() -> crate::methods::b::X { todo!() }".into());
    assert_eq!(problems(&upward, &rank), vec!["hierarchy imports methods::b, from a layer below its own".to_string()]);
    let mut unlisted = clean;
    unlisted.insert(vec!["cli".into()], "use crate::error::X;".into());
    assert_eq!(problems(&unlisted, &rank), vec!["cli: module 'cli' has no layer in docs/architecture.md".to_string()]);
}
