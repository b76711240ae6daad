#![expect(clippy::unwrap_used, reason = "tests")]
//! The CLI contract of DESIGN.md, run through the real binary.

use assert_cmd::Command;

fn toolfix() -> Command {
    Command::cargo_bin("toolfix").unwrap()
}

fn examples(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn json_plain_repairs_and_reports() {
    let out = toolfix().args(["json", "--report"]).write_stdin("{'a': True, 'b': [1, 2,],}").assert().success();
    let out = out.get_output();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "{\"a\": true, \"b\": [1, 2]}\n");
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr));
}

#[test]
fn json_plain_leaves_valid_input_byte_for_byte() {
    let text = "{\n  \"n\": 1.0,\n  \"big\": 12345678901234567890\n}\n";
    let out = toolfix().arg("json").write_stdin(text).assert().success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), text);
}

#[test]
fn json_plain_fails_with_a_pointed_error() {
    let out = toolfix().arg("json").write_stdin("I could not find it.").assert().code(1);
    let out = out.get_output();
    assert!(out.stdout.is_empty());
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr));
}

#[test]
fn json_batch_answers_every_line_in_order() {
    let input = concat!(
        "{\"id\": \"a\", \"input\": \"{'x': 1.50}\"}\n",
        "\n",
        "not json at all\n",
        "{\"id\": 7, \"input\": \"\"}\n",
        "{\"id\": \"c\", \"input\": \"[1, 2\"}\n",
        "{\"id\": \"d\"}\n",
    );
    let out = toolfix().args(["json", "--batch"]).write_stdin(input).assert().success();
    insta::assert_snapshot!(String::from_utf8_lossy(&out.get_output().stdout));
}

#[test]
fn json_batch_examples() {
    let out = toolfix().args(["json", "--batch", &examples("json.jsonl")]).assert().success();
    insta::assert_snapshot!(String::from_utf8_lossy(&out.get_output().stdout));
}

#[test]
fn repair_batch_examples() {
    let out = toolfix()
        .args(["repair", "--batch", "--tools", &examples("tools.json"), &examples("repair.jsonl")])
        .assert()
        .success();
    insta::assert_snapshot!(String::from_utf8_lossy(&out.get_output().stdout));
}

#[test]
fn repair_batch_keeps_value_arguments_as_written() {
    let input = "{\"id\":1,\"tool\":\"t\",\"arguments\":{\"n\":1.10,\"big\":12345678901234567890,\"s\":\"42\"},\
                 \"tools\":[{\"name\":\"t\",\"parameters\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\"},\
                 \"big\":{\"type\":\"integer\"},\"s\":{\"type\":\"integer\"}}}}]}\n";
    let out = toolfix().args(["repair", "--batch"]).write_stdin(input).assert().success();
    let line = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(line.contains("1.10"), "{line}");
    assert!(line.contains("12345678901234567890"), "{line}");
    assert!(line.contains("42}") && !line.contains("\"42\""), "{line}");
}

#[test]
fn repair_single_mode() {
    let out = toolfix()
        .args(["repair", "--tools", &examples("tools.json"), "--tool", "create_ticket"])
        .write_stdin("{\"ticket_title\": \"Login fails\", \"priority\": \"HIGH\"}")
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "{\"ticketTitle\": \"Login fails\", \"priority\": \"high\"}\n"
    );
    let out = toolfix()
        .args(["repair", "--tools", &examples("tools.json"), "--tool", "create_ticket"])
        .write_stdin("{\"priority\": \"urgent\"}")
        .assert()
        .code(1);
    insta::assert_snapshot!(String::from_utf8_lossy(&out.get_output().stderr));
}

#[test]
fn usage_errors_exit_2() {
    toolfix().args(["json", "--no-such-flag"]).assert().code(2);
    toolfix().args(["repair"]).write_stdin("{}").assert().code(2);
}

#[test]
fn extract_and_fix_batch_examples() {
    let tools = examples("tools.json");
    let input = examples("extract.jsonl");
    let out = toolfix().args(["extract", "--batch", "--tools", &tools, &input]).assert().success();
    insta::assert_snapshot!("extract_examples", String::from_utf8_lossy(&out.get_output().stdout));
    let out = toolfix().args(["fix", "--batch", "--tools", &tools, &input]).assert().success();
    insta::assert_snapshot!("fix_examples", String::from_utf8_lossy(&out.get_output().stdout));
}

#[test]
fn extract_keeps_going_when_a_schema_does_not_compile() {
    let input = "{\"id\":1,\"content\":\"<tool_call>{\\\"name\\\":\\\"t\\\",\\\"arguments\\\":{\\\"x\\\":1}}</tool_call>\",\
                 \"tools\":[{\"name\":\"t\",\"parameters\":{\"type\":\"float\"}}]}\n";
    let out = toolfix().args(["extract", "--batch"]).write_stdin(input).assert().success();
    let line = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(line.contains("\"name\":\"t\"") && line.contains("\"x\":1"), "{line}");
    let out = toolfix().args(["fix", "--batch"]).write_stdin(input).assert().success();
    let line = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(line.contains("\"ok\":false") && line.contains("does not compile"), "{line}");
}

#[test]
fn extract_single_mode_exits_0_on_prose_alone() {
    let out = toolfix()
        .arg("extract")
        .write_stdin("<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>")
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("\"name\":\"f\""));
    // Plain prose with no call is a valid answer.
    toolfix().arg("extract").write_stdin("just prose").assert().code(0);
}
