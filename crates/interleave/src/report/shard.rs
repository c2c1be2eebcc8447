//! The machine-readable summary one shard of a sharded exploration ([`crate::Config::shard`])
//! prints, and that `interleave merge-shards` combines into one verdict: which shard ran, what
//! it explored, how many executions it ran, and its first failure.
//!
//! The summary is one line of JSON after the prefix [`SHARD_SUMMARY_PREFIX`], so that it can be
//! found in a CI job's log however much else the job prints.

use std::fmt::Write as _;

use crate::config::Shard;

/// What starts the line that carries a shard's summary in a log.
pub const SHARD_SUMMARY_PREFIX: &str = "interleave-shard-summary: ";

/// What one shard of an exploration ran and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardSummary {
    /// Which shard this is.
    pub shard: Shard,
    /// The test the exploration ran in, as the test harness names it.
    pub test: Option<String>,
    /// The strategy's spec.
    pub strategy: String,
    /// The exploration seed.
    pub seed: u64,
    /// The execution budget of the whole (unsharded) exploration.
    pub budget: u64,
    /// How the executions are shared out.
    pub partition: ShardPartition,
    /// The executions this shard owns that it ran; over all shards, the executions of one
    /// unsharded run.
    pub executions: u64,
    /// The executions other shards own that this one ran too: because the strategy learns
    /// from them ([`crate::strategy::Strategy::learns_from`]), or, for a search split by
    /// prefixes, up to where they entered another shard's subtree. They are the price of
    /// planning exactly as an unsharded run does.
    pub learning_executions: u64,
    /// The first failing execution this shard owns: its index (the same as in an unsharded
    /// run), kind and replay token.
    pub failure: Option<ShardFailure>,
    /// When the shard stopped early because an execution it ran to learn from (owned by
    /// another shard, which reports it) failed, that execution's index.
    pub stopped_by: Option<u64>,
}

/// How the shards of an exploration share out its executions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardPartition {
    /// Execution `k` belongs to shard `k mod n + 1`: the indices are those of an unsharded run.
    Executions,
    /// A systematic search's subtrees are dealt out by their prefixes: the schedules are those
    /// of an unsharded run, the indices each shard's own, and failures are ordered by
    /// [`ShardFailure::order`] first.
    Prefixes,
}

impl ShardPartition {
    fn name(self) -> &'static str {
        match self {
            ShardPartition::Executions => "executions",
            ShardPartition::Prefixes => "prefixes",
        }
    }
}

/// The first failure of a shard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardFailure {
    /// The failing execution's index (the unsharded run's index when the shards share out
    /// executions; the shard's own when they share out prefixes).
    pub execution: u64,
    /// With [`ShardPartition::Prefixes`], the position of the failing execution's prefix among
    /// the prefixes in the order the search reached them, the same on every shard: the failure
    /// of the smallest position, then the smallest index, is the unsharded run's first.
    pub order: Option<u64>,
    /// What went wrong ([`crate::FailureKind`]'s words).
    pub kind: String,
    /// The replay token.
    pub token: String,
}

impl ShardSummary {
    /// The summary as one line: [`SHARD_SUMMARY_PREFIX`] and a JSON object.
    pub fn to_line(&self) -> String {
        let mut line = String::from(SHARD_SUMMARY_PREFIX);
        let optional = |value: Option<String>| value.unwrap_or_else(|| "null".to_string());
        let failure = optional(self.failure.as_ref().map(|failure| {
            format!(
                "{{\"execution\":{},\"order\":{},\"kind\":{},\"token\":{}}}",
                failure.execution,
                optional(failure.order.map(|order| order.to_string())),
                json_string(&failure.kind),
                json_string(&failure.token)
            )
        }));
        // Writing to a String cannot fail.
        let _ = write!(
            line,
            "{{\"version\":1,\"test\":{},\"shard\":{},\"shards\":{},\"strategy\":{},\"seed\":{},\
             \"budget\":{},\"partition\":\"{}\",\"executions\":{},\"learning_executions\":{},\
             \"failure\":{},\"stopped_by\":{}}}",
            optional(self.test.as_deref().map(json_string)),
            self.shard.number(),
            self.shard.count(),
            json_string(&self.strategy),
            self.seed,
            self.budget,
            self.partition.name(),
            self.executions,
            self.learning_executions,
            failure,
            optional(self.stopped_by.map(|index| index.to_string())),
        );
        line
    }
}

/// `text` as a JSON string literal.
fn json_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(quoted, "\\u{:04x}", u32::from(c));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_one_line_of_json_with_escaped_strings() {
        let summary = ShardSummary {
            shard: Shard::new(2, 3).unwrap(),
            test: Some("tests::a \"quoted\"\nname".to_string()),
            strategy: "auto".to_string(),
            seed: 7,
            budget: 100,
            partition: ShardPartition::Executions,
            executions: 33,
            learning_executions: 5,
            failure: Some(ShardFailure {
                execution: 31,
                order: None,
                kind: "panic".to_string(),
                token: "il2-abc".to_string(),
            }),
            stopped_by: None,
        };
        let line = summary.to_line();
        assert!(!line.contains('\n'), "{line}");
        assert_eq!(
            line,
            "interleave-shard-summary: {\"version\":1,\"test\":\"tests::a \\\"quoted\\\"\\nname\",\
             \"shard\":2,\"shards\":3,\"strategy\":\"auto\",\"seed\":7,\"budget\":100,\
             \"partition\":\"executions\",\"executions\":33,\"learning_executions\":5,\
             \"failure\":{\"execution\":31,\"order\":null,\"kind\":\"panic\",\
             \"token\":\"il2-abc\"},\"stopped_by\":null}"
        );
    }
}
