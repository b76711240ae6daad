//! `toolfix json`: lenient JSON salvage.

use crate::JsonArgs;
use crate::batch;
use crate::out;
use anyhow::Result;
use std::io::Write;
use std::process::ExitCode;

pub(crate) fn run(args: &JsonArgs) -> Result<ExitCode> {
    let input = args.io.read()?;
    let limits = args.io.limits();
    if args.io.batch {
        batch::run(&input, |line, answer| match line.str("input") {
            Err(msg) => answer.str("error", &msg),
            Ok(text) => match toolfix::salvage::salvage_with(&text, &limits) {
                Ok(s) => answer.raw("output", s.text()).value("fixes", &out::fixes(s.fixes())),
                Err(e) => answer.str("error", &e.to_string()),
            },
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    match toolfix::salvage::salvage_with(&input, &limits) {
        Ok(s) => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(s.text().as_bytes())?;
            if !s.text().ends_with('\n') {
                stdout.write_all(b"\n")?;
            }
            if args.report {
                for f in s.fixes() {
                    eprintln!("{} at {} {:?}", f.kind, f.span, input.get(f.span.range()).unwrap_or(""));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {}", e.report());
            Ok(ExitCode::from(1))
        }
    }
}
