//! How an atomic-set serializability violation reads in a report: the pattern, the atomic set,
//! both units of work with their sites, the accesses in order, the interleaving and a replay
//! token.

use std::fmt;

use super::interleaving::render_keeping;
use super::token::Token;
use super::ENV_REPLAY;
use crate::analysis::online::serializability::{UnitKey, Violation, PATTERNS};
use crate::analysis::thread_label;
use crate::atomic_set::{Declarations, SetId};
use crate::runtime::op::ShortSite;
use crate::runtime::Recording;
use crate::strategy::TraceEvent;

/// An execution that matched one of the eleven problematic access patterns: its units of work
/// on one atomic set are not serializable. The execution really ran this way; whether it also
/// failed is a separate finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtomicityViolation {
    /// The 0-based index of the execution.
    pub execution: u64,
    /// The pattern's number in seed 003's Table 1 (1 to 11).
    pub pattern: u8,
    /// The pattern, e.g. `r_u(m1) w_u'(m) w_u'(m̄) r_u(m2)`.
    pub pattern_text: &'static str,
    /// What the pattern means.
    pub meaning: &'static str,
    /// The atomic set.
    pub atomic_set: String,
    /// The interrupted unit of work `u`.
    pub unit: String,
    /// The interleaving unit of work `u'`.
    pub interleaver: String,
    /// The matched accesses, in execution order.
    pub accesses: Vec<String>,
    /// The replay token of the execution.
    pub token: String,
    pub(crate) interleaving: String,
    pub(crate) key: String,
}

impl AtomicityViolation {
    /// What identifies the violation across executions: the pattern and the accesses' units
    /// and sites, without thread numbers or object instances.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl AtomicityViolation {
    pub(crate) fn describe(
        ex: &Recording,
        execution: u64,
        trace: &[TraceEvent],
        declarations: &Declarations,
        violation: &Violation,
    ) -> AtomicityViolation {
        let pattern = &PATTERNS[violation.pattern];
        let unit_name = |key: UnitKey| -> String {
            match key {
                UnitKey::Unit(index) => {
                    let unit = &declarations.units[index];
                    let owner = unit.owner.map_or(String::new(), |o| {
                        let owner = &declarations.owners[o];
                        format!("{}::", short_type(owner.type_name))
                    });
                    format!("{owner}{}", unit.name)
                }
                UnitKey::Step(_) => "a step outside any unit of work".to_string(),
            }
        };
        let unit_label = |key: UnitKey| -> String {
            let name = unit_name(key);
            match key {
                UnitKey::Unit(index) => {
                    let unit = &declarations.units[index];
                    format!(
                        "unit of work `{name}` of {} (entered at {})",
                        thread_label(ex, unit.thread),
                        ShortSite(unit.site)
                    )
                }
                UnitKey::Step(step) => {
                    format!("{name} of {}", thread_label(ex, trace[step].thread))
                }
            }
        };
        let accesses: Vec<String> = violation
            .accesses
            .iter()
            .map(|a| {
                format!(
                    "{} {} {} at {}",
                    unit_name(a.unit),
                    if a.write { "writes" } else { "reads" },
                    ex.object_name(ex.events[a.step].object),
                    ShortSite(trace[a.step].site)
                )
            })
            .collect();
        let atomic_set = match violation.set {
            SetId::Owner(index) => {
                let owner = &declarations.owners[index];
                format!(
                    "the objects of {}#{}",
                    short_type(owner.type_name),
                    owner.instance
                )
            }
            SetId::Single(object) => match ex.objects.iter().position(|o| o.id == object) {
                Some(index) => format!("{{{}}}", ex.object_name(index as u32)),
                None => format!("{{{object}}}"),
            },
        };
        let key = format!(
            "{} {} {} {:?}",
            pattern.number,
            unit_name(violation.unit),
            unit_name(violation.interleaver),
            violation
                .accesses
                .iter()
                .map(|a| (ShortSite(trace[a.step].site).to_string(), a.write))
                .collect::<Vec<_>>()
        );
        AtomicityViolation {
            execution,
            pattern: pattern.number,
            pattern_text: pattern.text,
            meaning: pattern.meaning,
            atomic_set,
            unit: unit_label(violation.unit),
            interleaver: unit_label(violation.interleaver),
            accesses,
            token: Token::from_run(ex, None).encode(),
            interleaving: render_keeping(
                ex,
                &violation
                    .accesses
                    .iter()
                    .map(|a| a.step)
                    .collect::<Vec<_>>(),
            ),
            key,
        }
    }
}

/// `a::b::Account` reads `Account`.
fn short_type(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

impl fmt::Display for AtomicityViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "atomic-set serializability violation in execution {}: pattern {} `{}` ({}) on {}",
            self.execution, self.pattern, self.pattern_text, self.meaning, self.atomic_set
        )?;
        writeln!(f, "  u  = {}", self.unit)?;
        writeln!(f, "  u' = {}", self.interleaver)?;
        for access in &self.accesses {
            writeln!(f, "    {access}")?;
        }
        writeln!(f)?;
        writeln!(f, "{}", self.interleaving)?;
        writeln!(
            f,
            "To reproduce this execution, run the same test (monitored: strategy `rm` or \
             `assetfuzzer`, or Builder::monitor_atomic_sets) with"
        )?;
        write!(f, "    {ENV_REPLAY}={}", self.token)
    }
}
