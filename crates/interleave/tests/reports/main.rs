//! What users read and keep: failure reports (with snapshots), replay tokens, regression files
//! and the `#[interleave::test]` attribute.

mod helpers;

mod failures;
mod notify_report;
mod persistence;
mod readable;
mod replay;
mod report_snapshots;
mod test_attribute;
mod weak_race_report;
