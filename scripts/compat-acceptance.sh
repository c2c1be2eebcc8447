#!/usr/bin/env bash
# Acceptance check of the compat crates: builds loom 0.7.2's and shuttle 0.9.9's own integration
# tests, straight from their crates.io sources in the cargo registry, against interleave-loom and
# interleave-shuttle in a scratch directory outside the repository, runs every test alone with a
# timeout and prints pass / fail / skip per test with the reason, then the totals.
#
#   scripts/compat-acceptance.sh [loom|shuttle|all]   (default: all)
#
# Environment: SCRATCH (default /tmp/interleave-compat-acceptance), TIMEOUT per test in seconds
# (default 300), CARGO_TARGET_DIR (default $SCRATCH/target).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
which=${1:-all}
scratch=${SCRATCH:-/tmp/interleave-compat-acceptance}
timeout_seconds=${TIMEOUT:-300}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$scratch/target}
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)
mkdir -p "$scratch"

# Tests that are expected to fail here, with the reason; a listed test that passes counts as a
# pass. Keys are <suite>/<binary>/<test>.
declare -A known=(
  [loom/atomic/lazy_static_arc_shutdown]="loom drops lazy_static! values when the main thread returns and fails a detached thread that reads one later; interleave keeps them until every thread has ended"
)

# Lists shuttle tests as expected to fail, each with `kind: reason`.
expect_shuttle_failure() { # kind reason tests...
  local kind=$1 reason=$2 test
  shift 2
  for test in "$@"; do known[shuttle/shuttle/$test]="$kind: $reason"; done
}

# shuttle tests that assert shuttle's own schedule format or scheduler internals, which no other
# engine reproduces; each group shares its reason.
shuttle_internal() { expect_shuttle_failure "shuttle internals" "$@"; }
shuttle_internal "counts the schedules of shuttle's DFS, whose scheduling points are shuttle's, not interleave's" \
  basic::dfs::trivial_two_threads basic::dfs::two_threads basic::dfs::two_threads_depth_5 \
  basic::dfs::yield_loop_one_thread basic::dfs::yield_loop_two_threads \
  basic::dfs::yield_loop_two_threads_bounded basic::dfs::yield_loop_three_threads \
  future::basic::drop_shuttle_future future::basic::drop_shuttle_yield_future future::basic::async_atomic
shuttle_internal "counts the tracing events shuttle's runtime emits while it creates a thread-local's slot (interleave emits none)" \
  basic::thread::thread_local::slot_created_by_a_subscriber_while_it_is_created
shuttle_internal "reads the iteration metrics shuttle's runner emits as tracing events" \
  basic::metrics::iterations_test_basic basic::metrics::iterations_test_panic
shuttle_internal "compares shuttle's task signatures (hashes of its spawn call stacks)" \
  basic::task::async_tasks_created_at_same_src_location_have_different_signatures \
  basic::task::async_tasks_created_in_different_src_locations_have_different_signatures \
  basic::task::sync_tasks_created_at_same_src_location_have_different_signatures \
  basic::task::sync_tasks_created_in_different_src_locations_have_different_signatures \
  basic::task::task_signatures_consistent_across_shuttle_iterations
shuttle_internal "matches the exact messages of shuttle's schedule recording; interleave detects each of these nondeterminisms and reports it in its own words" \
  basic::uncontrolled_nondeterminism::hashset_without_set_seed \
  basic::uncontrolled_nondeterminism::panic_context_switch_when_expecting_rng \
  basic::uncontrolled_nondeterminism::panic_ended_earlier basic::uncontrolled_nondeterminism::panic_is_yielding \
  basic::uncontrolled_nondeterminism::panic_rng_when_expecting_context_switch \
  basic::uncontrolled_nondeterminism::panic_set_of_runnable basic::uncontrolled_nondeterminism::panic_should_have_ended
shuttle_internal "asserts how shuttle's DFS seeds its random number generators per execution and thread" \
  data::random::dfs_does_not_reseed_across_executions data::random::dfs_thread_rng_decorrelated_disabled \
  data::random::dfs_threads_decorrelated_enabled
shuttle_internal "replays a schedule string in shuttle's encoding, which is no interleave replay token" \
  basic::condvar::replay_producer_consumer_broken2 data::random::random_mod_10_equals_7_replay_fails \
  demo::async_match_deadlock::async_match_deadlock_replay demo::bounded_buffer::test_bounded_buffer_minimal_deadlock_replay
shuttle_internal "expects shuttle's runner to install a tracing dispatcher per task and to emit its scheduler's tracing events" \
  basic::tracing::default_dispatcher_is_per_task basic::tracing::default_dispatcher_is_per_task_under_global_default \
  basic::labels::test_tracing_without_label_fn basic::execution::try_get_current_task_from_a_tracing_subscriber \
  basic::teardown::task_spans_close_while_the_execution_is_there
shuttle_internal "expects shuttle's runner to put the caller's tracing default back after an execution that ended while a task was inside with_default; interleave leaves such a task's stack, with the guard on it, where it stood, as shuttle does, but does not manage tracing's default" \
  basic::tracing::default_dispatcher_restored_when_execution_ends_early
shuttle_internal "expects the text of shuttle's internal panic, which names its ExecutionState; interleave's names interleave::check" \
  basic::execution::failure_outside_execution
shuttle_internal "bounds shuttle's own count of scheduling points between resets of it to 7; interleave's step bound counts every step of the execution and cannot be reset" \
  basic::execution::do_reset_step_count
shuttle_internal "expects the exact schedules of shuttle's PCT (its priorities and change points), not PCT's guarantee" \
  basic::pct::figure1a_pct basic::pct::no_concurrency basic::pct::yield_spin_loop_unfair
shuttle_internal "expects shuttle's PCT to spin for ever on a correct program whose task waits by waking its own waker and returning Pending; interleave's priority strategies count that wake as a yield, so the task lets the others run and the test's expected failure never comes" \
  future::pct::yield_spin_loop_unfair

# shuttle tests that assert a behaviour shuttle's own comments in them mark as differing from
# std (a TODO or "isn't consistent with std"); interleave keeps std's behaviour there.
shuttle_not_std() { expect_shuttle_failure "not std (shuttle's own comment says so)" "$@"; }
shuttle_not_std "Relaxed atomics read as if sequentially consistent; interleave's weak memory model produces the outcome the test rules out" \
  basic::atomic::relaxed_orderings_work
shuttle_not_std "wait_timeout never times out in shuttle; interleave lets the deadline pass at any scheduling point after the wait started" \
  basic::condvar::notify_one_while_timeout
shuttle_not_std "a second read of an RwLock by its reader is refused even with no writer; interleave, like std on Linux and Windows, deadlocks it only when a writer waits in between (and explores that schedule)" \
  basic::rwlock::double_read basic::rwlock::double_try_read basic::rwlock::read_try_read

shuttle_internal "asserts that shuttle cannot attribute a detached task's panic while another task unwinds one (its message \"can't tell which task it is\" must show up); interleave attributes every panic to its thread, so the test's count of such losses stays 0" \
  basic::teardown::panic_of_detached_task_while_another_task_unwinds_fails_test
shuttle_internal "counts on shuttle's default ContinuationFunctionBehavior::Leak, which leaks a failed execution's parked futures and unstarted tasks; interleave always drops them as their tasks during teardown, as shuttle's Drop setting does (its twin, failed_execution_drops_its_leftovers_if_configured, passes)" \
  basic::teardown::failed_execution_with_leftovers_reports_its_failure

# shuttle tests whose assertion std cannot produce; interleave keeps std's behaviour there.
shuttle_differs_from_std() { expect_shuttle_failure "not std" "$@"; }
shuttle_differs_from_std "shuttle fails the test at the first panic of any task and never resumes a task that is unwinding one; under std the second task's panic is no failure of the first, which goes on unwinding, and its destructor's panic during the unwind aborts the process, as it does here after interleave prints the report and a replay token (Builder::panic_stops_execution, shuttle's immediately_return_on_panic, leaks the stack instead)" \
  basic::teardown::failed_execution_leaks_the_stack_of_a_task_unwinding_a_panic
shuttle_differs_from_std "std never drops a static, so a static's destructor that would block never runs and nothing fails; interleave drops lazy_static! values after the execution, on the scheduler loop's stack, where visible operations of destructors are no-ops (teardown.rs), so nothing fails either; the test expects shuttle's failure message" \
  basic::teardown::blocking_static_destructor_fails_test

declare -i passed=0 failed=0 skipped=0
results=$scratch/results.tsv
: > "$results"

report() { # suite binary test status reason
  printf '%-8s %-52s %-5s %s\n' "$1" "$2::$3" "$4" "$5"
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >> "$results"
  case $4 in pass) passed+=1 ;; fail) failed+=1 ;; *) skipped+=1 ;; esac
}

# Runs every test of the test binaries listed in $scratch/<suite>.bins, one at a time.
run_binaries() { # suite
  local suite=$1 bin name test log status reason
  while read -r bin; do
    name=$(basename "$bin" | sed 's/-[0-9a-f]*$//')
    local ignored
    ignored=$("$bin" --list --ignored 2>/dev/null | sed -n 's/: test$//p')
    while read -r test; do
      [ -n "$test" ] || continue
      if grep -qxF -- "$test" <<<"$ignored"; then
        report "$suite" "$name" "$test" skip "#[ignore] in the peer's own suite"
        continue
      fi
      log=$scratch/logs/$suite.$name.$test.log
      mkdir -p "$scratch/logs"
      timeout -s KILL "$timeout_seconds" "$bin" --exact "$test" --test-threads=1 >"$log" 2>&1
      status=$?
      local key="$suite/$name/${test##*::}"
      [ -n "${known[$suite/$name/$test]:-}" ] && key="$suite/$name/$test"
      if [ $status -eq 0 ]; then
        report "$suite" "$name" "$test" pass ""
      elif grep -q "cannot run a user-written shuttle Scheduler" "$log"; then
        report "$suite" "$name" "$test" skip "shuttle internals: runs a user-written shuttle Scheduler, which interleave cannot run (refused with a panic that says so)"
      elif grep -q "cannot replay a shuttle Schedule" "$log"; then
        report "$suite" "$name" "$test" skip "shuttle internals: replays a hand-made shuttle Schedule (shuttle's scheduling decisions, not interleave's steps; refused with a panic that says so)"
      elif [ -n "${known[$key]:-}" ]; then
        report "$suite" "$name" "$test" skip "${known[$key]}"
      elif [ $status -eq 137 ]; then
        report "$suite" "$name" "$test" fail "timed out after ${timeout_seconds}s (log: $log)"
      else
        reason=$(grep -m1 -E 'panicked at|did not panic|error:|overflowed' "$log" | cut -c1-160)
        report "$suite" "$name" "$test" fail "${reason:-exit status $status} (log: $log)"
      fi
    done < <("$bin" --list 2>/dev/null | sed -n 's/: test$//p')
  done < "$scratch/$suite.bins"
}

# Writes a test crate whose [[test]] targets are the peer's files in the registry, unchanged.
write_manifest() { # dir package dependency-line extra-dev-deps features-line files...
  local dir=$1 package=$2 dependency=$3 extra=$4 features=$5
  shift 5
  mkdir -p "$dir/src"
  : > "$dir/src/lib.rs"
  {
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n' "$package"
    printf '[workspace]\n\n[dev-dependencies]\n%s\n%s\n\n[features]\n%s\n\n' "$dependency" "$extra" "$features"
    printf '[profile.dev]\nopt-level = 1\n\n'
    for file in "$@"; do
      printf '[[test]]\nname = "%s"\npath = "%s"\n\n' "$(basename "$file" .rs)" "$file"
    done
  } > "$dir/Cargo.toml"
}

build_and_list() { # suite dir
  local suite=$1 dir=$2 build_log=$scratch/$1.build.log
  if ! (cd "$dir" && cargo test --no-run --message-format=json "${@:3}" > "$scratch/$suite.build.json" 2> "$build_log"); then
    echo "build of the $suite suite failed; see $build_log" >&2
    grep -E '^error' -A5 "$build_log" | head -40 >&2
  fi
  grep -o '"executable":"[^"]*"' "$scratch/$suite.build.json" | sed 's/"executable":"//;s/"$//' > "$scratch/$suite.bins"
}

if [ "$which" = loom ] || [ "$which" = all ]; then
  loom_src=$registry/loom-0.7.2
  dir=$scratch/loom-tests
  write_manifest "$dir" loom-tests \
    "loom = { package = \"interleave-loom\", path = \"$repo/crates/loom-compat\", features = [\"futures\"] }" \
    'futures-util = "0.3"' \
    'default = ["futures"]
futures = []' \
    "$loom_src"/tests/*.rs
  build_and_list loom "$dir" --release
  run_binaries loom
fi

if [ "$which" = shuttle ] || [ "$which" = all ]; then
  "$repo/scripts/shuttle-acceptance-crate.sh" "$scratch" "$registry/shuttle-0.9.9" "$repo"
  if [ -d "$scratch/shuttle-tests" ]; then
    build_and_list shuttle "$scratch/shuttle-tests" --release
    run_binaries shuttle
    # Tests cut out of the scratch copy (see shuttle-acceptance-crate.sh) are skipped.
    while IFS=$'\t' read -r test reason; do
      report shuttle shuttle "$test" skip "$reason"
    done < "$scratch/shuttle-cut.tsv"
    # A module that does not build counts each of its tests as skipped, with the compiler's
    # first error as the reason.
    while IFS=$'\t' read -r module reason; do
      case $reason in
        *shuttle_engine*) reason="shuttle internals: a test of this module uses the crate shuttle_engine (its thread-local internals) directly, so the module $reason" ;;
      esac
      while read -r test; do
        report shuttle shuttle "${module//\//::}::$test" skip "$reason"
      done < <(awk '/^ *#\[test\]/{t=1; next} t && /fn [a-z_0-9]+/{sub(/.*fn /, ""); sub(/[(<].*/, ""); print; t=0}' \
        "$scratch/shuttle-tests/tests-src/$module.rs")
    done < "$scratch/shuttle-excluded.tsv"
  fi
fi

echo
echo "passed $passed, failed $failed, skipped $skipped (per-test results: $results)"
[ $failed -eq 0 ]
