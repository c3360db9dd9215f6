//! Task files: the proto's canonical JSON of a `TaskSet` (or of one `TaskSpec`, or a list of
//! them), as JSON or YAML, read through the descriptor set so that any language's protobuf library
//! reads and writes the same format. Errors name the file, the task and the field.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use anyhow::{Context as _, Result, anyhow, bail};
use ax_proto::v1::{TaskSet, TaskSpec};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, SerializeOptions};
use serde_json::Value;

/// One task as read: where it came from and what it says.
#[derive(Debug, Clone)]
pub struct Sourced {
    /// The file (as given, or found in a directory given), `-` for stdin.
    pub file: String,
    /// The task.
    pub spec: TaskSpec,
}

/// The format of a task file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The proto's canonical JSON.
    Json,
    /// The same document as YAML.
    Yaml,
}

fn pool() -> Result<DescriptorPool> {
    DescriptorPool::decode(ax_proto::FILE_DESCRIPTOR_SET).context("axctl's descriptor set does not decode")
}

fn descriptor(pool: &DescriptorPool, name: &str) -> Result<MessageDescriptor> {
    pool.get_message_by_name(name).ok_or_else(|| anyhow!("axctl's descriptor set lacks {name}"))
}

/// A task set as a task file, in the proto's canonical JSON with the proto's field names (every
/// protobuf JSON parser reads them, as it reads lowerCamelCase) or as the same document in YAML.
pub fn write_set(set: &TaskSet, format: Format) -> Result<String> {
    let pool = pool()?;
    let message =
        DynamicMessage::decode(descriptor(&pool, "ax.v1.TaskSet")?, prost::Message::encode_to_vec(set).as_slice())
            .context("re-reading the task set")?;
    let options = SerializeOptions::new().use_proto_field_name(true);
    // Serialized straight from the message, so that fields keep the proto's order (name first).
    let mut out = Vec::new();
    match format {
        Format::Json => {
            let formatter = serde_json::ser::PrettyFormatter::with_indent(b"  ");
            let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
            message.serialize_with_options(&mut ser, &options)?;
            out.push(b'\n');
        }
        Format::Yaml => {
            let mut ser = serde_norway::Serializer::new(&mut out);
            message.serialize_with_options(&mut ser, &options)?;
        }
    }
    String::from_utf8(out).context("the task set is not UTF-8")
}

/// Every task of the files and directories given (a directory: its `.json`, `.yaml` and `.yml`
/// files, in name order, subdirectories included; `-`: stdin), with each task's file. A name given
/// twice is refused naming both places.
pub fn read_all(paths: &[PathBuf]) -> Result<Vec<Sourced>> {
    let pool = pool()?;
    let mut files = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            files.push(p.clone());
        } else if p.is_dir() {
            let before = files.len();
            walk(p, &mut files)?;
            if files.len() == before {
                bail!("{}: holds no .json, .yaml or .yml file", p.display());
            }
        } else {
            files.push(p.clone());
        }
    }
    let mut out: Vec<Sourced> = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    for f in files {
        let name = f.display().to_string();
        let text = if name == "-" {
            std::io::read_to_string(std::io::stdin()).context("cannot read stdin")?
        } else {
            std::fs::read_to_string(&f).with_context(|| format!("cannot read {name}"))?
        };
        for spec in parse(&pool, &name, &text)? {
            if let Some(first) = seen.insert(spec.name.clone(), name.clone()) {
                bail!("{name}: task {:?} is also defined in {first}; each task is defined once", spec.name);
            }
            out.push(Sourced { file: name.clone(), spec });
        }
    }
    Ok(out)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot read directory {}", dir.display()))?;
    entries.sort();
    for p in entries {
        let hidden = p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        if p.is_dir() {
            walk(&p, files)?;
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("json" | "yaml" | "yml")) {
            files.push(p);
        }
    }
    Ok(())
}

/// The documents of a file: JSON for `.json` (and for text that starts as JSON), YAML otherwise
/// (several documents separated by `---`).
fn documents(file: &str, text: &str) -> Result<Vec<Value>> {
    let json = file.ends_with(".json")
        || (!file.ends_with(".yaml") && !file.ends_with(".yml") && text.trim_start().starts_with(['{', '[']));
    if json {
        let v = serde_json::from_str(text).map_err(|e| anyhow!("{file}: not valid JSON: {e}"))?;
        return Ok(vec![v]);
    }
    let mut out = Vec::new();
    for doc in serde_norway::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(doc).map_err(|e| anyhow!("{file}: not valid YAML: {e}"))?;
        if !v.is_null() {
            out.push(v);
        }
    }
    Ok(out)
}

/// The tasks of one file's text.
fn parse(pool: &DescriptorPool, file: &str, text: &str) -> Result<Vec<TaskSpec>> {
    let spec = descriptor(pool, "ax.v1.TaskSpec")?;
    let mut out = Vec::new();
    for (d, doc) in documents(file, text)?.iter().enumerate() {
        let place = |at: String| if d == 0 { at } else { format!("document {}, {at}", d + 1) };
        let items: Vec<(String, &Value)> = match doc {
            Value::Object(o) if o.contains_key("tasks") => {
                if let Some(other) = o.keys().find(|k| *k != "tasks") {
                    bail!(
                        "{file}: {}: unknown field {other:?}; a task set holds only `tasks`",
                        place("top level".into())
                    );
                }
                match &o["tasks"] {
                    Value::Array(list) => list.iter().enumerate().map(|(i, v)| (format!("tasks[{i}]"), v)).collect(),
                    _ => bail!("{file}: {}: `tasks` must be a list of tasks", place("top level".into())),
                }
            }
            Value::Array(list) => list.iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)).collect(),
            Value::Object(_) => vec![(String::new(), doc)],
            _ => bail!(
                "{file}: {}: expected a task set ({{\"tasks\": [...]}}), a task or a list of tasks",
                place("top level".into())
            ),
        };
        for (at, v) in items {
            let name = v.get("name").and_then(Value::as_str).map(|n| format!("task {n:?}"));
            let what = match (at.is_empty(), name) {
                (_, Some(n)) => n,
                (false, None) => at.clone(),
                (true, None) => "the task".to_owned(),
            };
            let decoded = decode(&spec, v).map_err(|(path, why)| {
                let field = if path.is_empty() || path == "." { String::new() } else { format!(" field {path}:") };
                anyhow!("{file}: {}:{field} {why}", place(what.clone()))
            })?;
            let task: TaskSpec = decoded.transcode_to().map_err(|e| anyhow!("{file}: {}: {e}", place(what.clone())))?;
            if task.name.is_empty() {
                bail!("{file}: {}: field name: is required", place(what));
            }
            out.push(task);
        }
    }
    Ok(out)
}

/// One value as a message of `desc`: the error with the path of the field it is about.
fn decode(desc: &MessageDescriptor, v: &Value) -> std::result::Result<DynamicMessage, (String, String)> {
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(v, &mut track);
    DynamicMessage::deserialize(desc.clone(), de).map_err(|e| (track.path().to_string(), e.to_string()))
}

/// A message of axd about `tasks[i]` of an ApplyTasks request, with the file and task it came
/// from in place of the index: `tasks[3].schedule.cron.expression: …` reads
/// `jobs.yaml: task "nightly": field schedule.cron.expression: …`.
pub fn locate(message: &str, tasks: &[Sourced]) -> String {
    let Some(rest) = message.strip_prefix("tasks[") else { return message.to_owned() };
    let Some((index, rest)) = rest.split_once(']') else { return message.to_owned() };
    let Some(t) = index.parse::<usize>().ok().and_then(|i| tasks.get(i)) else { return message.to_owned() };
    let rest = match rest.strip_prefix('.') {
        Some(field) => format!(": field {field}"),
        None => rest.to_owned(),
    };
    format!("{}: task {:?}{rest}", t.file, t.spec.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(file: &str, text: &str) -> Result<Vec<TaskSpec>> {
        parse(&pool()?, file, text)
    }

    #[test]
    fn a_set_a_task_and_a_list_read_alike_in_json_and_yaml() {
        let set = r#"{"tasks": [{"name": "a", "app": "x", "handler": "h",
            "schedule": {"fixed_rate": {"interval": "3s"}}, "misfirePolicy": "MISFIRE_POLICY_SKIP"}]}"#;
        let one = specs("a.json", set).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].name, "a");
        assert_eq!(one[0].misfire_policy, ax_proto::v1::MisfirePolicy::Skip as i32);
        let yaml = "name: a\napp: x\nhandler: h\nschedule:\n  fixed_rate:\n    interval: 3s\nmisfire_policy: MISFIRE_POLICY_SKIP\n---\n- name: b\n  app: x\n  handler: h\n";
        let two = specs("a.yaml", yaml).unwrap();
        assert_eq!(two.len(), 2);
        assert_eq!(two[0], one[0]);
        assert_eq!(two[1].name, "b");
    }

    #[test]
    fn written_sets_read_back_unchanged() {
        let spec = TaskSpec {
            name: "a".into(),
            app: "x".into(),
            handler: "h".into(),
            enabled: Some(false),
            labels: [("team".to_owned(), "core".to_owned())].into(),
            timeout: Some(prost_types::Duration { seconds: 1, nanos: 500_000_000 }),
            max_running: Some(0),
            ..Default::default()
        };
        let set = TaskSet { tasks: vec![spec.clone()] };
        for format in [Format::Json, Format::Yaml] {
            let text = write_set(&set, format).unwrap();
            let file = if format == Format::Json { "t.json" } else { "t.yaml" };
            assert_eq!(specs(file, &text).unwrap(), vec![spec.clone()], "{text}");
        }
    }

    #[test]
    fn errors_name_the_file_the_task_and_the_field() {
        let bad = r#"{"tasks": [{"name": "ok", "app": "x"}, {"name": "nightly", "schedule": {"cron": {"expresion": "* * * * *"}}}]}"#;
        let err = specs("jobs.json", bad).unwrap_err().to_string();
        assert!(err.starts_with("jobs.json: task \"nightly\": field schedule.cron:"), "{err}");
        assert!(err.contains("expresion"), "{err}");
        let err = specs("jobs.yaml", "- name: n\n  timeout: soon\n").unwrap_err().to_string();
        assert!(err.starts_with("jobs.yaml: task \"n\": field timeout:"), "{err}");
        let err = specs("jobs.yaml", "- app: x\n").unwrap_err().to_string();
        assert_eq!(err, "jobs.yaml: [0]: field name: is required");
        let err = specs("jobs.json", "{\"tasks\": [], \"prune\": true}").unwrap_err().to_string();
        assert!(err.contains("unknown field \"prune\""), "{err}");
    }

    #[test]
    fn server_errors_about_a_task_name_its_file() {
        let t = |file: &str, name: &str| Sourced {
            file: file.into(),
            spec: TaskSpec { name: name.into(), ..Default::default() },
        };
        let tasks = [t("a.yaml", "one"), t("dir/b.json", "two")];
        assert_eq!(
            locate("tasks[1].schedule.cron.expression: bad", &tasks),
            "dir/b.json: task \"two\": field schedule.cron.expression: bad"
        );
        assert_eq!(locate("tasks[0]: no", &tasks), "a.yaml: task \"one\": no");
        assert_eq!(locate("apps[0]: no", &tasks), "apps[0]: no");
        assert_eq!(locate("tasks[9].app: no", &tasks), "tasks[9].app: no");
    }
}
