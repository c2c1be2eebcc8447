//! The same source compiles and passes against std and against interleave.

mod with_std {
    mod rt {
        pub use std::{sync, thread};
    }
    pub mod bank {
        use super::rt;
        include!("shared/bank.rs");
    }
}

mod with_interleave {
    mod rt {
        pub use interleave::{sync, thread};
    }
    pub mod bank {
        use super::rt;
        include!("shared/bank.rs");
    }
}

#[test]
fn same_source_runs_on_std() {
    assert_eq!(with_std::bank::transfers(), (70, 130));
}

#[test]
fn same_source_runs_under_interleave() {
    interleave::Builder::new()
        .ignore_environment()
        .strategy("pct:d=3".parse().unwrap())
        .executions(500)
        .check(|| assert_eq!(with_interleave::bank::transfers(), (70, 130)));
}
