//! The peers run the benchmark programs through the worker process, as `interleave bench` does.

use interleave_peers::suite_runs::{PeerFailureKind, PeerSpec};
use interleave_peers::worker::{Client, Job};
use interleave_programs::Variant;

fn client() -> Client {
    Client::new(env!("CARGO_BIN_EXE_peers").into(), vec!["worker".into()])
}

fn job(peer: PeerSpec, program: &str, variant: Variant, executions: u64) -> Job {
    Job {
        peer,
        program: program.to_string(),
        variant,
        seed: 1,
        executions,
    }
}

/// Every fixed twin of the default suite passes under both peers (or is beyond loom's model),
/// so the shims and the peers agree with interleave on what is correct.
#[test]
fn fixed_twins_pass_under_the_peers() {
    let mut client = client();
    for program in interleave_programs::default_suite() {
        for peer in [
            PeerSpec::ShuttleRandom,
            PeerSpec::Loom {
                preemption_bound: 2,
            },
        ] {
            let run = client
                .run(&job(peer, program.name, Variant::Fixed, 50))
                .unwrap_or_else(|e| panic!("{} (fixed) under {peer}: {e}", program.name));
            assert!(
                run.failure.is_none(),
                "{} (fixed) under {peer}: {:?}",
                program.name,
                run.failure
            );
            assert!(run.executions > 0 || run.unsupported.is_some());
        }
    }
}

/// The peers find simple bugs and the worker survives loom's abort after a deadlock: d1's
/// lock-order inversion under loom's bounded search (twice, so the second job runs in a fresh
/// worker), and the seed 000 Fig 1 assertion under shuttle's random walk.
#[test]
fn peers_find_easy_bugs() {
    let mut client = client();
    let loom = PeerSpec::Loom {
        preemption_bound: 2,
    };
    for _ in 0..2 {
        let run = client
            .run(&job(loom, "rpro-d1", Variant::Buggy, 10_000))
            .unwrap();
        let failure = run.failure.expect("loom finds d1");
        assert_eq!(failure.kind, PeerFailureKind::Deadlock);
        assert_eq!(failure.execution + 1, run.executions);
    }
    let run = client
        .run(&job(
            PeerSpec::ShuttleRandom,
            "bounding-fig1",
            Variant::Buggy,
            1_000,
        ))
        .unwrap();
    let failure = run.failure.expect("shuttle finds fig1");
    assert_eq!(failure.kind, PeerFailureKind::Panic);
    assert!(failure.message.contains("Fig 1"), "{}", failure.message);
}

/// A long program is unsupported under loom without being run, so a loom column over the
/// whole suite costs nothing for it.
#[test]
fn loom_refuses_long_programs_up_front() {
    let mut client = client();
    let long: Vec<_> = interleave_programs::all()
        .iter()
        .filter(|p| p.long)
        .collect();
    assert!(!long.is_empty(), "no program is marked long");
    for program in long {
        let run = client
            .run(&job(
                PeerSpec::Loom {
                    preemption_bound: 2,
                },
                program.name,
                Variant::Fixed,
                50,
            ))
            .unwrap();
        assert_eq!(run.executions, 0, "{}", program.name);
        assert_eq!(
            run.unsupported.as_deref(),
            Some(interleave_peers::suite_runs::LOOM_LONG),
            "{}",
            program.name
        );
    }
}

/// The memory-ordering programs' bugs need a weak memory model: loom, which models one, finds
/// each buggy version, and covers its bounded search of each fixed twin without a failure;
/// shuttle, which runs every atomic operation as `SeqCst`, finds none of the bugs.
#[test]
fn loom_finds_the_memory_ordering_bugs_and_shuttle_does_not() {
    let mut client = client();
    let loom = PeerSpec::Loom {
        preemption_bound: 2,
    };
    let programs: Vec<_> = interleave_programs::default_suite()
        .filter(|p| p.needs_weak_memory)
        .collect();
    assert!(!programs.is_empty(), "no program needs a weak memory model");
    for program in programs {
        let name = program.name;
        let run = client
            .run(&job(loom, name, Variant::Buggy, 10_000))
            .unwrap();
        let failure = run
            .failure
            .unwrap_or_else(|| panic!("loom finds no bug in {name} ({} run)", run.executions));
        assert_eq!(failure.kind, PeerFailureKind::Panic, "{name}: {failure:?}");
        let run = client
            .run(&job(loom, name, Variant::Fixed, 10_000))
            .unwrap();
        assert!(
            run.failure.is_none() && run.exhausted,
            "{name} (fixed) under loom: {run:?}"
        );
        let run = client
            .run(&job(PeerSpec::ShuttleRandom, name, Variant::Buggy, 1_000))
            .unwrap();
        assert!(run.failure.is_none(), "{name} under shuttle: {run:?}");
    }
}
