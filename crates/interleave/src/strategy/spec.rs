//! Strategy specs: `name` or `name:key=value,key=value`, the one syntax shared by the API, the
//! CLI and the `INTERLEAVE_STRATEGY` environment variable.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::{Pct, Random, Strategy};

/// A built-in strategy with its parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrategySpec {
    /// Random walk (`random`).
    #[default]
    Random,
    /// PCT with bug depth `depth` (`pct:d=3`); `steps` fixes `k` instead of estimating it
    /// (`pct:d=3,k=500`); `yields` sets the yield limit of the spin-loop rule.
    Pct {
        /// The bug depth `d`, at least 1.
        depth: usize,
        /// A fixed `k`, or `None` to estimate it from earlier executions.
        steps: Option<u64>,
        /// Yields after which a thread loses its priority.
        yields: u32,
    },
}

/// Names of the built-in strategies, for error messages and help.
pub const STRATEGY_NAMES: &[&str] = &["random", "pct"];

/// Why a strategy spec could not be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SpecError {
    /// The spec is empty.
    #[error("empty strategy spec: expected one of {}", STRATEGY_NAMES.join(", "))]
    Empty,
    /// The strategy name is not known.
    #[error("unknown strategy {0:?}: expected one of {names}", names = STRATEGY_NAMES.join(", "))]
    UnknownStrategy(String),
    /// A parameter is not of the form `key=value`.
    #[error("malformed parameter {0:?} in strategy spec: expected key=value")]
    Malformed(String),
    /// The strategy does not take this parameter.
    #[error("strategy {strategy} has no parameter {parameter:?} (it takes: {known})")]
    UnknownParameter {
        /// The strategy name.
        strategy: &'static str,
        /// The parameter given.
        parameter: String,
        /// The parameters it takes.
        known: &'static str,
    },
    /// A parameter value is not valid.
    #[error("invalid value {value:?} for {parameter}: {reason}")]
    BadValue {
        /// The parameter.
        parameter: String,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl StrategySpec {
    /// PCT with depth `depth` and default settings.
    pub fn pct(depth: usize) -> StrategySpec {
        StrategySpec::Pct {
            depth,
            steps: None,
            yields: super::pct::DEFAULT_YIELD_LIMIT,
        }
    }

    /// A fresh strategy object for this spec.
    pub fn build(&self) -> Box<dyn Strategy> {
        match *self {
            StrategySpec::Random => Box::new(Random),
            StrategySpec::Pct {
                depth,
                steps,
                yields,
            } => {
                let mut pct = Pct::new(depth).with_yield_limit(yields);
                if let Some(steps) = steps {
                    pct = pct.with_steps(steps);
                }
                Box::new(pct)
            }
        }
    }
}

fn parse_number<T: FromStr + PartialOrd + std::fmt::Display>(
    parameter: &str,
    value: &str,
    minimum: T,
) -> Result<T, SpecError> {
    let bad = |reason: String| SpecError::BadValue {
        parameter: parameter.to_string(),
        value: value.to_string(),
        reason,
    };
    let number: T = value
        .parse()
        .map_err(|_| bad("expected a whole number".to_string()))?;
    if number < minimum {
        return Err(bad(format!("it must be at least {minimum}")));
    }
    Ok(number)
}

impl FromStr for StrategySpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<StrategySpec, SpecError> {
        let text = text.trim();
        let (name, parameters) = text.split_once(':').unwrap_or((text, ""));
        let mut pairs = Vec::new();
        for pair in parameters
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| SpecError::Malformed(pair.to_string()))?;
            pairs.push((key.trim(), value.trim()));
        }
        match name.trim().to_ascii_lowercase().as_str() {
            "" => Err(SpecError::Empty),
            "random" => match pairs.first() {
                None => Ok(StrategySpec::Random),
                Some((key, _)) => Err(SpecError::UnknownParameter {
                    strategy: "random",
                    parameter: key.to_string(),
                    known: "no parameters",
                }),
            },
            "pct" => {
                let mut spec = StrategySpec::pct(3);
                if let StrategySpec::Pct {
                    depth,
                    steps,
                    yields,
                } = &mut spec
                {
                    for (key, value) in pairs {
                        match key {
                            "d" | "depth" => *depth = parse_number(key, value, 1usize)?,
                            "k" | "steps" => *steps = Some(parse_number(key, value, 1u64)?),
                            "yields" => *yields = parse_number(key, value, 1u32)?,
                            _ => {
                                return Err(SpecError::UnknownParameter {
                                    strategy: "pct",
                                    parameter: key.to_string(),
                                    known: "d, k, yields",
                                })
                            }
                        }
                    }
                }
                Ok(spec)
            }
            other => Err(SpecError::UnknownStrategy(other.to_string())),
        }
    }
}

impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.build().spec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_specs() {
        assert_eq!("random".parse::<StrategySpec>(), Ok(StrategySpec::Random));
        assert_eq!("pct:d=2".parse::<StrategySpec>(), Ok(StrategySpec::pct(2)));
        let spec: StrategySpec = " PCT: d=4, k=200 ".parse().unwrap();
        assert_eq!(spec.to_string(), "pct:d=4,k=200");
        assert_eq!(StrategySpec::pct(3).to_string(), "pct:d=3");
    }

    #[test]
    fn rejects_bad_specs_clearly() {
        assert_eq!(
            "dfs".parse::<StrategySpec>(),
            Err(SpecError::UnknownStrategy("dfs".into()))
        );
        assert!(matches!(
            "pct:r=3".parse::<StrategySpec>(),
            Err(SpecError::UnknownParameter { .. })
        ));
        assert!(matches!(
            "pct:d=0".parse::<StrategySpec>(),
            Err(SpecError::BadValue { .. })
        ));
        assert!(matches!(
            "pct:d".parse::<StrategySpec>(),
            Err(SpecError::Malformed(_))
        ));
        let message = "pct:d=x".parse::<StrategySpec>().unwrap_err().to_string();
        assert!(message.contains("expected a whole number"), "{message}");
    }
}
