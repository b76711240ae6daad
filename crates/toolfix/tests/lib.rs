//! The library's integration tests, linked as one test binary (`autotests = false`).

mod bench_inputs;
mod bfcl_corruption;
mod check_props;
mod common;
mod extend;
mod extract_api;
mod feedback;
mod formats;
mod hostile;
mod intent;
mod json_corpus;
mod pipeline;
mod properties;
mod regressions;
mod repair_cases;
mod repair_families;
mod reply;
mod salvage_cases;
mod salvage_cut_props;
mod salvage_hostile;
mod salvage_props;
mod stream;
mod truncation;
mod truncation_props;
