//! The `connection_pool` example's bug is found, reported with its sites in the example, and
//! reproduced by its replay token; the fixed pool passes.

use crate::connection_pool;

use interleave::{Builder, FailureKind};

#[test]
fn the_pool_opening_one_connection_too_many_is_found_and_replayed() {
    for seed in 0..10 {
        let report = Builder::new()
            .ignore_environment()
            .strategy("pct:d=3".parse().unwrap())
            .seed(seed)
            .executions(1000)
            .explore(|| connection_pool::two_requests(false))
            .unwrap();
        let failure = report
            .first_failure()
            .unwrap_or_else(|| panic!("seed {seed}: {report}"));
        assert_eq!(failure.kind, FailureKind::Panic);
        let text = failure.to_string();
        assert!(
            text.contains("the pool opened connection #2 but its limit is 1"),
            "{text}"
        );
        assert!(
            text.contains("examples/connection_pool.rs:"),
            "the report points into the example: {text}"
        );
        assert!(
            !text.contains("sync/mutex.rs"),
            "the async mutex's steps are recorded at the example's lines: {text}"
        );

        let replayed = Builder::new()
            .ignore_environment()
            .replay(&failure.token, || connection_pool::two_requests(false))
            .unwrap();
        let again = replayed.first_failure().expect("the replay fails again");
        assert_eq!(again.message, failure.message);
        assert_eq!(again.steps, failure.steps);

        let fixed = Builder::new()
            .ignore_environment()
            .strategy("pct:d=3".parse().unwrap())
            .seed(seed)
            .executions(1000)
            .explore(|| connection_pool::two_requests(true))
            .unwrap();
        assert!(fixed.is_ok(), "seed {seed}: {fixed}");
    }
}
