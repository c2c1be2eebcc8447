//! The parts of shuttle's API that interleave-shuttle adds on top of interleave: shuttle's
//! `JoinError`, 128-bit atomics, per-task labels, tags and names, and vector clocks.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;
use std::sync::Mutex as StdMutex;

use shuttle::current::{
    self, get_label_for_task, get_name_for_task, get_tag_for_current_task, me, set_label_for_task,
    set_name_for_task, set_tag_for_current_task, ChildLabelFn, Labels, TaskName, VectorClock,
};
use shuttle::future::{self, JoinError};
use shuttle::sync::atomic::{AtomicI128, AtomicU128, Ordering};
use shuttle::sync::Arc;
use shuttle::thread;

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the run should fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// What awaiting an aborted task gave, written so that a second `JoinError` variant would not
/// compile: shuttle's code matches on it exhaustively.
fn outcome(result: Result<u32, JoinError>) -> Result<u32, &'static str> {
    result.map_err(|error| match error {
        JoinError::Cancelled => "cancelled",
    })
}

#[test]
fn an_aborted_task_is_cancelled_in_some_schedules_and_finishes_in_others() {
    let outcomes = StdArc::new(StdMutex::new(HashSet::new()));
    let seen = outcomes.clone();
    shuttle::check_dfs(
        move || {
            let task = future::spawn(async { 42u32 });
            task.abort();
            let result = future::block_on(task);
            seen.lock().unwrap().insert(outcome(result));
        },
        None,
    );
    let outcomes = outcomes.lock().unwrap();
    assert_eq!(*outcomes, HashSet::from([Ok(42), Err("cancelled")]));
    assert_eq!(JoinError::Cancelled.to_string(), "task was cancelled");
}

#[test]
fn a_lost_update_on_a_128_bit_atomic_is_found() {
    let message = panic_message(|| {
        shuttle::check_dfs(
            || {
                let total = Arc::new(AtomicU128::new(u128::from(u64::MAX)));
                let other = total.clone();
                let t = thread::spawn(move || {
                    let seen = other.load(Ordering::SeqCst);
                    other.store(seen + 1, Ordering::SeqCst);
                });
                let seen = total.load(Ordering::SeqCst);
                total.store(seen + 1, Ordering::SeqCst);
                t.join().unwrap();
                assert_eq!(
                    total.load(Ordering::SeqCst),
                    u128::from(u64::MAX) + 2,
                    "an increment was lost"
                );
            },
            None,
        )
    });
    assert!(message.contains("an increment was lost"), "{message}");
}

#[test]
fn read_modify_writes_on_128_bit_atomics_are_atomic() {
    shuttle::check_dfs(
        || {
            let total = Arc::new(AtomicI128::new(i128::MIN));
            let other = total.clone();
            let t = thread::spawn(move || {
                other.fetch_add(1, Ordering::Relaxed);
            });
            total.fetch_add(2, Ordering::Relaxed);
            t.join().unwrap();
            assert_eq!(total.load(Ordering::SeqCst), i128::MIN + 3);
            assert_eq!(total.swap(5, Ordering::SeqCst), i128::MIN + 3);
            assert_eq!(
                total.compare_exchange(4, 9, Ordering::SeqCst, Ordering::SeqCst),
                Err(5)
            );
            assert_eq!(total.fetch_max(7, Ordering::SeqCst), 5);
            assert_eq!(
                total.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(v * 2)),
                Ok(7)
            );
            assert_eq!(format!("{total:?}"), "14");
        },
        None,
    );
}

#[test]
fn a_128_bit_load_acquires_from_the_store_and_a_store_acquires_nothing() {
    shuttle::check_dfs(
        || {
            let value = Arc::new(AtomicU128::new(0));
            let (for_writer, for_reader) = (value.clone(), value.clone());
            let writer = thread::spawn(move || {
                for_writer.store(1, Ordering::SeqCst);
                assert_eq!(
                    current::clock().get(2),
                    0,
                    "the writer learnt of the reader"
                );
            });
            let reader = thread::spawn(move || {
                let read = for_reader.load(Ordering::SeqCst);
                assert_eq!(read == 1, current::clock().get(1) > 0);
            });
            writer.join().unwrap();
            reader.join().unwrap();
        },
        None,
    );
}

#[derive(Clone, Debug, PartialEq)]
struct Depth(u32);

#[test]
fn tasks_inherit_labels_and_tags_at_spawn_and_change_them_independently() {
    shuttle::check_dfs(
        || {
            assert_eq!(get_label_for_task::<Depth>(me()), None);
            set_label_for_task(me(), Depth(0));
            set_tag_for_current_task(StdArc::new(Team(7)));
            let child = thread::spawn(|| {
                let inherited = get_label_for_task::<Depth>(me());
                set_label_for_task(me(), Depth(1));
                let grandchild = future::spawn(async { get_label_for_task::<Depth>(me()) });
                (inherited, future::block_on(grandchild).unwrap())
            });
            // A change after the spawn is not the child's.
            set_label_for_task(me(), Depth(5));
            let (inherited, grandchild) = child.join().unwrap();
            assert_eq!(inherited, Some(Depth(0)));
            assert_eq!(grandchild, Some(Depth(1)));
            assert_eq!(get_label_for_task::<Depth>(me()), Some(Depth(5)));
            let tag = get_tag_for_current_task().expect("the tag was set");
            assert_eq!(tag.as_any().downcast_ref::<Team>(), Some(&Team(7)));
        },
        None,
    );
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Team(u64);

impl shuttle::current::Taggable for Team {}

#[test]
fn a_child_label_fn_sets_the_labels_of_children() {
    shuttle::check_random(
        || {
            set_label_for_task(
                me(),
                ChildLabelFn(StdArc::new(|task, labels: &mut Labels| {
                    labels.insert(TaskName::from(format!("child {}", usize::from(task))));
                })),
            );
            let child = thread::spawn(|| get_name_for_task(me()).map(String::from));
            let expected = format!("child {}", usize::from(current::me()) + 1);
            assert_eq!(child.join().unwrap(), Some(expected));
        },
        10,
    );
}

#[test]
fn a_task_is_named_after_its_builder_and_can_be_renamed() {
    shuttle::check_random(
        || {
            assert_eq!(
                get_name_for_task(me()).map(String::from).as_deref(),
                Some("main-thread")
            );
            assert_eq!(format!("{:?}", me()), "main-thread(0)");
            let handle = thread::Builder::new()
                .name("producer".into())
                .spawn(|| {
                    assert_eq!(thread::current().name(), Some("producer"));
                    let name = get_name_for_task(me()).expect("the builder named it");
                    assert_eq!(String::from(name), "producer");
                    set_name_for_task(me(), "renamed");
                    get_name_for_task(me()).map(String::from)
                })
                .unwrap();
            assert_eq!(handle.join().unwrap().as_deref(), Some("renamed"));
        },
        10,
    );
}

#[test]
fn what_a_thread_did_happens_before_its_joiner_continues() {
    shuttle::check_dfs(
        || {
            let child = thread::spawn(current::clock);
            let before_join = current::clock();
            let at_child_end = child.join().unwrap();
            let after_join = current::clock();
            assert!(
                at_child_end <= after_join,
                "{at_child_end:?} {after_join:?}"
            );
            assert!(before_join <= after_join);
            assert!(after_join.get(1) >= at_child_end.get(1));
        },
        None,
    );
}

#[test]
fn a_clock_entry_is_positive_once_something_its_task_did_happens_before() {
    shuttle::check_dfs(
        || {
            let flag = Arc::new(shuttle::sync::atomic::AtomicBool::new(false));
            let child_flag = flag.clone();
            let child = thread::spawn(move || {
                let at_start = current::clock();
                assert!(
                    at_start.get(0) > 0,
                    "the spawn happens before the child: {at_start:?}"
                );
                assert_eq!(at_start.get(1), 0, "the child has done nothing yet");
                child_flag.load(Ordering::SeqCst);
                assert!(current::clock().get(1) > 0);
            });
            let before_join = current::clock();
            assert_eq!(before_join.get(1), 0, "nothing the child did is known yet");
            child.join().unwrap();
            assert!(current::clock().get(1) > 0);
            flag.store(true, Ordering::SeqCst);
        },
        None,
    );
}

#[test]
fn vector_clocks_compare_by_happens_before() {
    let a = VectorClock::from(&[1, 0, 2]);
    let b = VectorClock::from(&[1, 1, 2]);
    let c = VectorClock::from(&[0, 2]);
    assert!(a < b);
    assert_eq!(a.partial_cmp(&c), None);
    assert_eq!(a.partial_cmp(&a.clone()), Some(std::cmp::Ordering::Equal));
    assert_eq!((b.get(1), b.get(9), b.len()), (1, 0, 3));
}

mod batch_semaphore {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use shuttle::future::batch_semaphore::{BatchSemaphore, Fairness, TryAcquireError};
    use shuttle::sync::Arc;
    use shuttle::thread;

    use super::panic_message;

    fn poll<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(Waker::noop()))
    }

    /// Runs `f` once inside an execution, where the semaphore's scheduling points live.
    fn in_execution(f: impl Fn() + Send + Sync + 'static) {
        shuttle::check_dfs(f, None);
    }

    #[test]
    fn a_fair_semaphore_serves_a_queued_request_before_a_later_one() {
        in_execution(|| {
            let semaphore = BatchSemaphore::new(1, Fairness::StrictlyFair);
            let mut big = pin!(semaphore.acquire(2));
            assert!(poll(big.as_mut()).is_pending());
            assert_eq!(semaphore.try_acquire(1), Err(TryAcquireError::NoPermits));
            semaphore.release(1);
            assert!(matches!(poll(big.as_mut()), Poll::Ready(Ok(()))));
            assert_eq!(semaphore.available_permits(), 0);
        });
    }

    #[test]
    fn bypassable_requests_and_unfair_semaphores_let_later_requests_pass() {
        in_execution(|| {
            let fair = BatchSemaphore::new(1, Fairness::StrictlyFair);
            let mut big = pin!(fair.acquire_bypassable(2));
            assert!(poll(big.as_mut()).is_pending());
            assert_eq!(fair.try_acquire(1), Ok(()));

            let unfair = BatchSemaphore::new(1, Fairness::Unfair);
            let mut big = pin!(unfair.acquire(2));
            assert!(poll(big.as_mut()).is_pending());
            assert_eq!(unfair.try_acquire(1), Ok(()));
            unfair.release(3);
            assert!(matches!(poll(big.as_mut()), Poll::Ready(Ok(()))));
            assert_eq!(unfair.available_permits(), 1);
        });
    }

    #[test]
    fn a_reservation_keeps_the_permits_for_its_holder() {
        in_execution(|| {
            let semaphore = BatchSemaphore::new(1, Fairness::Unfair);
            let mut reserving = pin!(semaphore.acquire_reserving(1, 3));
            assert!(poll(reserving.as_mut()).is_pending());
            assert_eq!(semaphore.available_permits(), 0);
            assert_eq!(semaphore.try_acquire(1), Err(TryAcquireError::NoPermits));
            semaphore.release(2);
            assert!(matches!(poll(reserving.as_mut()), Poll::Ready(Ok(()))));
            assert_eq!(semaphore.available_permits(), 0);
        });
    }

    #[test]
    fn dropping_the_front_waiter_serves_the_next_and_close_fails_the_rest() {
        in_execution(|| {
            let semaphore = BatchSemaphore::new(1, Fairness::StrictlyFair);
            let mut small = pin!(semaphore.acquire(1));
            {
                let mut big = pin!(semaphore.acquire(2));
                assert!(poll(big.as_mut()).is_pending());
                assert!(poll(small.as_mut()).is_pending());
            }
            assert!(matches!(poll(small.as_mut()), Poll::Ready(Ok(()))));
            let mut waiting = pin!(semaphore.acquire(1));
            assert!(poll(waiting.as_mut()).is_pending());
            semaphore.close();
            assert!(matches!(poll(waiting.as_mut()), Poll::Ready(Err(_))));
            assert_eq!(semaphore.try_acquire(1), Err(TryAcquireError::Closed));
            assert_eq!(
                semaphore.acquire_blocking(1).unwrap_err().to_string(),
                "semaphore closed"
            );
        });
    }

    #[test]
    fn a_semaphore_has_the_same_signature_in_every_execution() {
        let signatures =
            std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
        let seen = signatures.clone();
        shuttle::check_random(
            move || {
                let semaphores: Vec<_> = (0..2)
                    .map(|_| BatchSemaphore::new(1, Fairness::Unfair))
                    .collect();
                let other = BatchSemaphore::new(1, Fairness::Unfair);
                assert_ne!(semaphores[0].signature(), semaphores[1].signature());
                let mut seen = seen.lock().unwrap();
                seen.extend(semaphores.iter().map(|s| s.signature().clone()));
                seen.insert(other.signature().clone());
            },
            5,
        );
        assert_eq!(signatures.lock().unwrap().len(), 3);
    }

    #[test]
    fn blocking_acquires_exclude_each_other_and_a_wait_nobody_ends_is_a_deadlock() {
        shuttle::check_dfs(
            || {
                let semaphore = Arc::new(BatchSemaphore::new(2, Fairness::StrictlyFair));
                let inside = Arc::new(std::sync::atomic::AtomicUsize::new(0));
                let workers: Vec<_> = (0..2)
                    .map(|_| {
                        let (semaphore, inside) = (semaphore.clone(), inside.clone());
                        thread::spawn(move || {
                            semaphore.acquire_blocking(2).unwrap();
                            let others = inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            assert_eq!(others, 0, "two holders of every permit");
                            thread::yield_now();
                            inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                            semaphore.release(2);
                        })
                    })
                    .collect();
                for worker in workers {
                    worker.join().unwrap();
                }
            },
            None,
        );
        let message = panic_message(|| {
            shuttle::check_dfs(
                || {
                    let semaphore = BatchSemaphore::new(1, Fairness::Unfair);
                    semaphore.acquire_blocking(2).unwrap();
                },
                None,
            )
        });
        assert!(message.starts_with("deadlock"), "{message}");
    }
}

/// A user-written shuttle scheduler builds (shuttle's trait methods exist) but running it
/// panics with the reason, as does replaying a hand-made shuttle `Schedule`; neither silently
/// runs something else.
#[test]
fn user_schedulers_and_shuttle_schedules_are_refused_with_the_reason() {
    use shuttle::scheduler::{RandomScheduler, ReplayScheduler, Schedule, Scheduler, Task, TaskId};

    struct FirstRunnable(RandomScheduler);

    impl Scheduler for FirstRunnable {
        fn new_execution(&mut self) -> Option<Schedule> {
            self.0.new_execution()
        }

        fn next_task(
            &mut self,
            runnable_tasks: &[&Task],
            _current_task: Option<TaskId>,
            _is_yielding: bool,
        ) -> Option<TaskId> {
            runnable_tasks.first().map(|task| task.id())
        }

        fn next_u64(&mut self) -> u64 {
            self.0.next_u64()
        }
    }

    let message = panic_message(|| {
        shuttle::Runner::new(FirstRunnable(RandomScheduler::new(1)), Default::default()).run(|| {});
    });
    assert!(
        message.contains("cannot run a user-written shuttle Scheduler"),
        "{message}"
    );

    let mut schedule = Schedule::new_from_task_ids(0, vec![0, 0, 1]);
    schedule.push_random();
    assert_eq!(schedule.len(), 4);
    let mut replay = ReplayScheduler::new_from_schedule(schedule);
    replay.set_allow_incomplete();
    let message = panic_message(|| {
        shuttle::Runner::new(replay, Default::default()).run(|| {});
    });
    assert!(
        message.contains("cannot replay a shuttle Schedule"),
        "{message}"
    );

    let mut replay = ReplayScheduler::new_from_encoded("il2-unused");
    replay.set_target_clock(&[2, 1]);
    let message = panic_message(|| {
        shuttle::Runner::new(replay, Default::default()).run(|| {});
    });
    assert!(message.contains("target vector clock"), "{message}");

    let message = panic_message(shuttle::current::reset_step_count);
    assert!(message.contains("cannot reset the step count"), "{message}");
}

/// Outside an execution there is no current task: `try_get_current_task` says so and
/// `get_current_task` panics with shuttle's words; inside, both name the running task.
#[test]
fn the_current_task_is_known_inside_an_execution_only() {
    assert_eq!(current::try_get_current_task(), None);
    let message = panic_message(|| {
        current::get_current_task();
    });
    assert!(message.contains("`ExecutionState` is not set"), "{message}");
    shuttle::check_random(
        || {
            assert_eq!(current::try_get_current_task(), Some(me()));
            assert_eq!(current::get_current_task(), Some(me()));
            let spawned = thread::spawn(current::try_get_current_task);
            let id: usize = spawned.thread().id().into();
            assert_eq!(spawned.join().unwrap().map(usize::from), Some(id));
        },
        10,
    );
}

/// A task's labels and tag outlive the task and are dropped at the end of each execution as
/// their task, in task order and inside the execution: the destructors see their own task as
/// `me()`, look up task names, and spawn a task of their own, which is dropped too.
#[test]
fn labels_and_tags_are_dropped_at_the_end_as_their_tasks() {
    static DROPS: StdMutex<Vec<usize>> = StdMutex::new(Vec::new());
    static SPAWNED_DROPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    #[derive(Clone, Debug)]
    struct Owner(current::TaskId);
    impl Drop for Owner {
        fn drop(&mut self) {
            assert_eq!(me(), self.0, "dropped as its task");
            let _ = format!("{:?}", self.0);
            DROPS.lock().unwrap().push(usize::from(me()));
        }
    }

    #[derive(Debug)]
    struct SpawnsOnDrop;
    impl shuttle::current::Taggable for SpawnsOnDrop {}
    impl Drop for SpawnsOnDrop {
        fn drop(&mut self) {
            let parent = me();
            struct Counts(current::TaskId);
            impl Drop for Counts {
                fn drop(&mut self) {
                    assert_ne!(me(), self.0);
                    SPAWNED_DROPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
            let counts = Counts(parent);
            drop(future::spawn(async move {
                let _counts = counts;
            }));
        }
    }

    shuttle::check_random(
        || {
            DROPS.lock().unwrap().clear();
            let children: Vec<_> = (0..3)
                .map(|_| thread::spawn(|| set_label_for_task(me(), Owner(me()))))
                .collect();
            // Set after the spawns, so that no child inherits a clone of it.
            set_label_for_task(me(), Owner(me()));
            for child in children {
                child.join().unwrap();
            }
            set_tag_for_current_task(StdArc::new(SpawnsOnDrop));
            assert!(DROPS.lock().unwrap().is_empty(), "kept until the end");
        },
        1,
    );
    assert_eq!(*DROPS.lock().unwrap(), [0, 1, 2, 3]);
    assert_eq!(SPAWNED_DROPPED.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// shuttle's environment variable names are there for code that mentions them.
#[test]
fn shuttles_environment_variable_names_are_there() {
    assert_eq!(shuttle::CAPTURE_BACKTRACE, "SHUTTLE_CAPTURE_BACKTRACE");
    assert_eq!(shuttle::SILENCE_WARNINGS, "SHUTTLE_SILENCE_WARNINGS");
    assert_eq!(shuttle::ANNOTATION_FILE, "SHUTTLE_ANNOTATION_FILE");
}
