#![expect(clippy::unwrap_used, reason = "tests")]
//! `toolfix check` through the real binary: problems at JSON pointers into the tools file,
//! errors exit 1, warnings 0, an unreadable file 2.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn toolfix() -> Command {
    Command::cargo_bin("toolfix").unwrap()
}

/// A file of its own for each test (tests run in parallel), in a directory removed when
/// the test ends.
struct TestFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl std::ops::Deref for TestFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

fn file(name: &str, text: &str) -> TestFile {
    let dir = tempfile::Builder::new().prefix("toolfix-check-cmd-").tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    TestFile { _dir: dir, path }
}

fn run(path: &Path, code: i32) -> (String, String) {
    let out = toolfix().args(["check", "--tools", path.to_str().unwrap()]).assert().code(code);
    let out = out.get_output();
    let file = path.display().to_string();
    let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&file, "tools.json");
    (clean(&out.stdout), clean(&out.stderr))
}

#[test]
fn errors_are_pointed_and_exit_1() {
    let path = file(
        "errors.json",
        r#"[{"type": "function", "function": {"name": "search", "parameters": {"type": "object",
             "properties": {"query": {"type": "strng"}, "limit": {"type": "int", "minimum": 1}},
             "requried": ["query"], "required": ["qurey"]}}},
           {"name": "ok", "parameters": {"type": "object"}}]"#,
    );
    let (stdout, stderr) = run(&path, 1);
    insta::assert_snapshot!("check_errors_stderr", stderr);
    let problems: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(problems[0]["pointer"], "/0/function/parameters/required/0");
    assert_eq!(problems[0]["severity"], "error");
    assert_eq!(problems[1]["pointer"], "/0/function/parameters/properties/query/type");
    assert_eq!(problems.as_array().unwrap().len(), 4);
}

#[test]
fn warnings_only_exit_0() {
    let path = file(
        "warnings.json",
        r#"{"tools": [{"name": "a", "parameters": {"type": "object", "properties": {"user_id": {}, "userId": {}},
                       "additionalProperties": false, "descriptoin": "typo"}}]}"#,
    );
    let (_, stderr) = run(&path, 0);
    insta::assert_snapshot!("check_warnings_stderr", stderr);
}

#[test]
fn clean_file_exits_0() {
    let path = file("clean.json", r#"[{"name": "a", "parameters": {"type": "object"}}]"#);
    let (stdout, stderr) = run(&path, 0);
    assert_eq!(stdout, "[]\n");
    assert_eq!(stderr, "tools.json: no problems\n");
}

#[test]
fn missing_or_broken_files_are_named() {
    let missing = std::env::temp_dir().join("toolfix-check-no-such-file.json");
    let out = toolfix().args(["check", "--tools", missing.to_str().unwrap()]).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("cannot read the tools file") && stderr.contains("toolfix-check-no-such-file.json"),
        "{stderr}"
    );
    let path = file("broken.json", "[{\"name\": \"a\",");
    let (stdout, stderr) = run(&path, 1);
    assert!(stderr.starts_with("tools.json: error: tools.json is not JSON: EOF"), "{stderr}");
    assert!(stdout.contains("\"not_json\""), "{stdout}");
    let path = file("object.json", r#"{"model": "m"}"#);
    let (_, stderr) = run(&path, 1);
    assert!(stderr.contains("not_a_tool_list"), "{stderr}");
}

#[test]
fn the_shipped_example_tools_are_clean() {
    let path = PathBuf::from(format!("{}/../../examples/tools.json", env!("CARGO_MANIFEST_DIR")));
    let (stdout, _) = run(&path, 0);
    assert_eq!(stdout, "[]\n");
}
