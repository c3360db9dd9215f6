//! The generated scripts and pages name what the clap definition has: every noun, every leaf
//! subcommand, every option.

use super::{completions::Shell, completions::script, man::write_pages};
use crate::commands::definition;

/// The top-level nouns (`task`, `instance`, ...), as the definition has them.
fn nouns() -> Vec<String> {
    definition().get_subcommands().map(|c| c.get_name().to_owned()).collect()
}

/// Every leaf subcommand as its path of names (`["task", "create"]`), with the long options it takes.
fn leaves() -> Vec<(Vec<String>, Vec<String>)> {
    fn walk(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, Vec<String>)>) {
        let subs: Vec<&clap::Command> = cmd.get_subcommands().filter(|s| s.get_name() != "help").collect();
        if subs.is_empty() {
            let longs = cmd.get_arguments().filter_map(|a| a.get_long().map(str::to_owned)).collect();
            out.push((path.clone(), longs));
        }
        for sub in subs {
            path.push(sub.get_name().to_owned());
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut root = definition();
    root.build();
    let mut out = Vec::new();
    walk(&root, &mut Vec::new(), &mut out);
    out
}

#[test]
fn the_bash_script_completes_every_top_level_noun() {
    let bash = script(Shell::Bash, definition());
    assert!(bash.contains("complete -F _axctl"), "{bash}");
    let nouns = nouns();
    assert!(nouns.len() >= 10, "{nouns:?}");
    for noun in nouns {
        // bash-completion lists the candidates of a position as one word list.
        let listed = bash.lines().any(|l| l.contains("opts=") && l.split_whitespace().any(|w| w == noun));
        assert!(listed, "the bash script does not offer `{noun}`");
    }
}

#[test]
fn zsh_and_fish_scripts_name_the_subcommands() {
    let zsh = script(Shell::Zsh, definition());
    assert!(zsh.starts_with("#compdef axctl"), "{}", &zsh[..zsh.len().min(200)]);
    let fish = script(Shell::Fish, definition());
    assert!(fish.contains("complete -c axctl"), "{}", &fish[..fish.len().min(200)]);
    for (path, _) in leaves() {
        let verb = path.last().expect("a leaf has a name");
        assert!(zsh.contains(&format!("'{verb}:")), "zsh does not name `{}`", path.join(" "));
        assert!(fish.contains(&format!("-a \"{verb}\"")), "fish does not name `{}`", path.join(" "));
    }
}

#[test]
fn man_pages_exist_for_every_leaf_subcommand_and_name_its_options() {
    let dir = std::env::temp_dir().join(format!("axctl-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let written = write_pages(definition(), &dir).expect("pages");
    assert!(dir.join("axctl.1").is_file());
    assert!(written.iter().all(|p| p.extension().is_some_and(|e| e == "1")), "{written:?}");
    let leaves = leaves();
    assert!(leaves.iter().any(|(p, _)| p == &["task", "create"]), "{leaves:?}");
    for (path, longs) in leaves {
        let file = dir.join(format!("axctl-{}.1", path.join("-")));
        let page = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // roff: a title header, a NAME section and an OPTIONS section.
        assert!(page.starts_with(".ie \\n(.g .ds Aq") || page.contains("\n.TH "), "{}: not roff", file.display());
        assert!(page.contains(".TH "), "{}: no .TH", file.display());
        assert!(page.contains(".SH NAME"), "{}: no NAME", file.display());
        for long in longs {
            // roff escapes each dash of `--endpoint` as `\-`.
            let escaped = format!("\\-\\-{}", long.replace('-', "\\-"));
            assert!(page.contains(&escaped), "{} does not name --{long}", file.display());
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn an_unknown_shell_is_refused_naming_the_choices() {
    let err = <crate::Cli as clap::Parser>::try_parse_from(["axctl", "completions", "tcsh"]).expect_err("tcsh");
    let text = err.to_string();
    assert!(text.contains("tcsh") && text.contains("bash") && text.contains("zsh") && text.contains("fish"), "{text}");
}
