//! The engine sits at the bottom of the crate: nothing under `src/runtime` refers to another
//! module of the crate (`config`, `report`, `strategy`, `analysis`, `explore`, `ssb`, the
//! std-shaped facade). The layers above reach it through its own vocabulary (`Schedule`,
//! `View`, `FailureKind`, `Stop`, `Narrator`), and no two modules refer to each other through
//! a cycle. This test reads the sources, so a new upward reference fails it; run it with
//! `--nocapture` to see every module's references.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).expect("the source directory is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The first path segments that `text` names after `crate::`, outside line comments: the
/// module of `crate::report::Token`, and each of `crate::{config::X, report}`.
fn references(text: &str) -> BTreeSet<String> {
    let identifier = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // A group: the segments that start each comma-separated path at depth zero.
            let mut depth = 0;
            let mut start = true;
            for (offset, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        found.insert(identifier(&group[offset..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(identifier(rest));
        }
    }
    found.remove("");
    found
}

/// The top-level module a source file belongs to (`runtime` for `src/runtime/op.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("a file under src");
    let first = relative
        .components()
        .next()
        .expect("a non-empty path")
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn the_engine_refers_to_no_module_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in sources(&src) {
        let module = module_of(&src, &file);
        let text = fs::read_to_string(&file).expect("a readable source file");
        let mut names = references(&text);
        names.remove(&module);
        graph.entry(module).or_default().extend(names);
    }
    // Keep the crate's modules only (not items of the crate root such as `crate::Error`).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for names in graph.values_mut() {
        names.retain(|name| modules.contains(name));
    }
    for (module, names) in &graph {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        println!("{module:>12} -> {}", names.join(", "));
    }
    let engine = graph.get("runtime").expect("src/runtime exists");
    assert!(
        engine.is_empty(),
        "src/runtime refers to modules above it: {engine:?}"
    );
    // The layering must not be vacuous: the layers above do use the engine.
    assert!(graph["explore"].contains("runtime") && graph["strategy"].contains("runtime"));
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "the modules refer to each other in a cycle: {}",
            cycle.join(" -> ")
        );
    }
}

/// A cycle of references among the modules, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        graph: &BTreeMap<String, BTreeSet<String>>,
        module: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == module) {
            let mut cycle = path[start..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_string());
        for next in graph.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(graph, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(module.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|module| visit(graph, module, &mut Vec::new(), &mut done))
}
