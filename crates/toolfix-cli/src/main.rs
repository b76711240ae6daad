//! The `toolfix` command-line tool.

use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut input = String::new();
    if std::io::stdin().read_to_string(&mut input).is_err() {
        return ExitCode::from(2);
    }
    match toolfix::salvage::salvage(&input) {
        Ok(s) => {
            println!("{}", s.text());
            for f in s.fixes() {
                eprintln!("{} {}", f.kind, f.span);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}", e.report());
            ExitCode::from(1)
        }
    }
}
