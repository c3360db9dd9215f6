//! The shape of `scheduler/src`: no import cycles between modules, no source file over 700
//! lines, and the parts of `scheduler/house.toml` with no arrow between them that must never
//! exist. Read from the source text, so it holds for every build.
//!
//! A module depends on another when it names it in a path (`crate::a::b`, `super::x`, or a child
//! module's name). A module naming its own submodules (declaring or re-exporting them) is how a
//! Rust module presents its parts, not a dependency, and is left out.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

const MAX_LINES: usize = 700;

/// `src/store/mod.rs` -> `["store"]`, `src/store/tasks.rs` -> `["store", "tasks"]`, `src/lib.rs` -> `[]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("file name");
    match last.as_str() {
        "lib.rs" | "main.rs" | "mod.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_owned()),
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source without comments and string literals (so doc text names nothing).
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut kept = String::new();
        for c in line.chars() {
            if !in_str && c == '/' && prev == '/' {
                kept.pop();
                break;
            }
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                kept.push(c);
            }
            prev = c;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// Every path in the code: `a::b::c` runs of identifiers, with `use` trees (`a::{b, c::d}`)
/// expanded.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    // Prefix stack for `{` groups that follow a `::`.
    let mut stack: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    while i < bytes.len() {
        let c = bytes[i];
        if ident(c) {
            let start = i;
            while i < bytes.len() && ident(bytes[i]) {
                i += 1;
            }
            let word: String = bytes[start..i].iter().collect();
            current.push(word);
            if i + 1 < bytes.len() && bytes[i] == ':' && bytes[i + 1] == ':' {
                i += 2;
                if i < bytes.len() && bytes[i] == '{' {
                    stack.push(current.clone());
                    current.clear();
                    i += 1;
                }
                continue;
            }
            let mut full: Vec<String> = stack.iter().flatten().cloned().collect();
            full.append(&mut current);
            if full.len() > 1 {
                out.push(full);
            } else if !stack.is_empty() {
                // `a::{b, c}`: `b` alone is the path `a::b`.
                let mut p: Vec<String> = stack.iter().flatten().cloned().collect();
                p.extend(full);
                out.push(p);
            }
            continue;
        }
        match c {
            '}' if !stack.is_empty() => {
                stack.pop();
                current.clear();
            }
            ',' | ' ' | '\n' | '\t' if !stack.is_empty() => current.clear(),
            _ if stack.is_empty() => current.clear(),
            _ => {}
        }
        i += 1;
    }
    out
}

/// The module a path names, from module `here` (`None` for other crates).
fn resolve(here: &[String], path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut base: Vec<String> = match path[0].as_str() {
        "crate" => Vec::new(),
        "super" => {
            let mut b = here.to_vec();
            b.pop();
            b
        }
        "self" => here.to_vec(),
        first => {
            let mut child = here.to_vec();
            child.push(first.to_owned());
            if !modules.contains(&child) {
                return None;
            }
            here.to_vec()
        }
    };
    let rest = if matches!(path[0].as_str(), "crate" | "super" | "self") { &path[1..] } else { path };
    for seg in rest {
        if seg == "super" {
            base.pop();
            continue;
        }
        let mut next = base.clone();
        next.push(seg.clone());
        if modules.contains(&next) {
            base = next;
        } else {
            break;
        }
    }
    Some(base)
}

/// The modules of scheduler/src, what each depends on, and the files over [`MAX_LINES`].
struct Graph {
    modules: BTreeSet<Vec<String>>,
    deps: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    too_long: Vec<String>,
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut too_long = Vec::new();
    let mut deps: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        let lines = text.lines().count();
        if lines > MAX_LINES {
            too_long.push(format!("{} ({lines} lines)", f.display()));
        }
        if f.ends_with("main.rs") {
            continue; // the binary: a crate of its own on top of the library
        }
        let here = module_of(&src, f);
        let entry = deps.entry(here.clone()).or_default();
        for p in paths_in(&code_of(&text)) {
            let Some(target) = resolve(&here, &p, &modules) else { continue };
            // A module naming itself or its own submodules is not a dependency.
            if target.starts_with(&here) {
                continue;
            }
            entry.insert(target);
        }
    }
    Graph { modules, deps, too_long }
}

#[test]
fn scheduler_modules_have_no_import_cycles_and_no_file_is_over_700_lines() {
    let Graph { deps, too_long, .. } = graph();
    assert!(too_long.is_empty(), "source files over {MAX_LINES} lines: {too_long:?}");
    assert!(deps.len() > 20, "the modules were read: {:?}", deps.keys().collect::<Vec<_>>());

    // Depth-first search for a cycle; the first one found is reported with its path.
    fn visit(
        m: &Vec<String>,
        deps: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        path: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| p == m).unwrap_or(0);
                let mut cycle: Vec<String> = path[start..].iter().map(|p| p.join("::")).collect();
                cycle.push(m.join("::"));
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m.clone(), 1);
        path.push(m.clone());
        for d in deps.get(m).into_iter().flatten() {
            // Depending on an ancestor covers the ancestor's own file only.
            if let Some(c) = visit(d, deps, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in deps.keys() {
        if let Some(cycle) = visit(m, &deps, &mut state, &mut Vec::new()) {
            panic!("import cycle in scheduler/src: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_path_reader_expands_use_trees() {
    let p = paths_in("use crate::{core::{Core, clock::Clock}, store::Store};\nlet x = super::tables::Row::new();");
    let shown: Vec<String> = p.iter().map(|p| p.join("::")).collect();
    for want in ["crate::core::Core", "crate::core::clock::Clock", "crate::store::Store", "super::tables::Row::new"] {
        assert!(shown.contains(&want.to_owned()), "{want} in {shown:?}");
    }
}

/// `scheduler/house.toml`: the parts, the arrows that must never exist, and those still to go.
struct House {
    /// Module path (`store`, `routing::explain`) -> part.
    part_of: BTreeMap<String, String>,
    never: Vec<(String, String, String)>,
    pending: Vec<(String, String, String)>,
    crate_never: Vec<(Vec<String>, String, String)>,
}

impl House {
    /// The part of a module: that of the longest listed path it starts with (`routing::explain`
    /// before `routing`), so a part may name one module of another part's folder.
    fn part_of_module(&self, m: &[String]) -> Option<&str> {
        (1..=m.len()).rev().find_map(|n| self.part_of.get(&m[..n].join("::"))).map(String::as_str)
    }
}

fn house(text: &str) -> House {
    let doc: toml::Table = text.parse().expect("scheduler/house.toml parses");
    let mut part_of = BTreeMap::new();
    for (part, modules) in doc["parts"].as_table().expect("[parts]") {
        for m in modules.as_array().expect("a part is a list of modules") {
            let m = m.as_str().expect("a module name").to_owned();
            assert!(part_of.insert(m.clone(), part.clone()).is_none(), "module {m} is in two parts");
        }
    }
    let arrows = |key: &str| -> Vec<(String, String, String)> {
        let field = |t: &toml::Value, f: &str| t[f].as_str().unwrap_or_else(|| panic!("{key}.{f}")).to_owned();
        doc.get(key)
            .and_then(toml::Value::as_array)
            .map(|a| a.iter().map(|t| (field(t, "from"), field(t, "to"), field(t, "why"))).collect())
            .unwrap_or_default()
    };
    let crate_never = doc
        .get("crate_never")
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .map(|t| {
                    let from = t["from"].as_array().expect("crate_never.from").iter();
                    (
                        from.map(|c| c.as_str().expect("a crate folder").to_owned()).collect(),
                        t["to"].as_str().expect("crate_never.to").to_owned(),
                        t["why"].as_str().expect("crate_never.why").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    House { part_of, never: arrows("never"), pending: arrows("pending"), crate_never }
}

/// Every arrow from a module of part `from` to a module of part `to`, as `a::b -> c::d`.
fn arrows_between(g: &Graph, h: &House, from: &str, to: &str) -> Vec<String> {
    let part = |m: &Vec<String>| h.part_of_module(m);
    let mut out = Vec::new();
    for (m, targets) in &g.deps {
        if part(m) != Some(from) {
            continue;
        }
        for t in targets.iter().filter(|t| part(t) == Some(to)) {
            out.push(format!("{} -> {}", m.join("::"), t.join("::")));
        }
    }
    out
}

/// The violations of `h` in `g`: modules on no part, never-arrows that exist, pending arrows that
/// are gone, unknown part names.
fn broken(g: &Graph, h: &House) -> Vec<String> {
    let parts: BTreeSet<&String> = h.part_of.values().collect();
    let mut out = Vec::new();
    for m in g.modules.iter().filter(|m| !m.is_empty()) {
        if h.part_of_module(m).is_none() {
            out.push(format!("module {} is on no part of scheduler/house.toml", m.join("::")));
        }
    }
    for listed in h.part_of.keys() {
        let path: Vec<String> = listed.split("::").map(str::to_owned).collect();
        if !g.modules.contains(&path) {
            out.push(format!("{listed} in scheduler/house.toml is no module of scheduler/src"));
        }
    }
    for (from, to, _) in h.never.iter().chain(&h.pending) {
        for p in [from, to] {
            if !parts.contains(p) {
                out.push(format!("{p} is not a part of scheduler/house.toml"));
            }
        }
    }
    for (from, to, why) in &h.never {
        let found = arrows_between(g, h, from, to);
        if !found.is_empty() {
            out.push(format!("never {from} -> {to} ({why}), but: {}", found.join("; ")));
        }
    }
    for (from, to, why) in &h.pending {
        if arrows_between(g, h, from, to).is_empty() {
            out.push(format!("{from} -> {to} ({why}) is gone: move it from [[pending]] to [[never]]"));
        }
    }
    out
}

fn house_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("house.toml")).expect("scheduler/house.toml")
}

#[test]
fn the_code_keeps_the_house_no_arrow_that_must_never_exist() {
    let g = graph();
    let h = house(&house_text());
    let problems = broken(&g, &h);
    assert!(problems.is_empty(), "scheduler/house.toml does not hold:\n{}", problems.join("\n"));
    // The crates: a worker and the CLI build without axd's code.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (from, to, why) in &h.crate_never {
        for dir in from {
            let manifest: toml::Table = std::fs::read_to_string(root.join(dir).join("Cargo.toml"))
                .expect("a crate's Cargo.toml")
                .parse()
                .expect("Cargo.toml parses");
            for section in ["dependencies", "build-dependencies"] {
                let named = manifest.get(section).and_then(toml::Value::as_table).is_some_and(|t| t.contains_key(to));
                assert!(!named, "{dir}/Cargo.toml [{section}] names {to}: never ({why})");
            }
        }
    }
}

#[test]
fn a_forbidden_arrow_or_an_unplaced_module_is_reported() {
    let g = graph();
    // Today's code against a house that forbids an arrow the code has (Api -> Store), and that
    // leaves a module off every part.
    let mut text = house_text().replace("\"origin\", \"error\",", "\"origin\",");
    text.push_str("\n[[never]]\nfrom = \"Api\"\nto = \"Store\"\nwhy = \"a test\"\n");
    let problems = broken(&g, &house(&text));
    assert!(problems.iter().any(|p| p.starts_with("never Api -> Store (a test), but: grpc")), "{problems:?}");
    assert!(problems.iter().any(|p| p == "module error is on no part of scheduler/house.toml"), "{problems:?}");
    // A pending arrow that no longer exists is reported too.
    let mut text = house_text();
    text.push_str("\n[[pending]]\nfrom = \"Model\"\nto = \"Sessions\"\nwhy = \"a test\"\n");
    let problems = broken(&g, &house(&text));
    assert!(problems.iter().any(|p| p.starts_with("Model -> Sessions")), "{problems:?}");
    // A part may hold one module of another part's folder: routing::explain is Explain's, and its
    // arrow to a rule of routing is an arrow between those parts; a listed path that names no
    // module is reported.
    let mut text = house_text().replace("\"routing::state\"]", "\"routing::state\", \"routing::gone\"]");
    text.push_str("\n[[never]]\nfrom = \"Explain\"\nto = \"Rules\"\nwhy = \"a test\"\n");
    let problems = broken(&g, &house(&text));
    assert!(
        problems.iter().any(|p| p.starts_with("never Explain -> Rules (a test), but: routing::explain -> routing::")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p == "routing::gone in scheduler/house.toml is no module of scheduler/src"),
        "{problems:?}"
    );
}
