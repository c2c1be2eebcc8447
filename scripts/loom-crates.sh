#!/usr/bin/env bash
# Runs real crates' own loom test suites twice, once against loom 0.7 as published and once
# against interleave-loom, the only difference being the one `loom = ...` line of the crate's
# Cargo.toml; and reproduces a historical bug that a loom test catches.
#
#   scripts/loom-crates.sh [suites|historical|all] [CRATE]   (default: all; CRATE runs one suite)
#
# suites      concurrent-queue 2.5.0, bytes 1.12.2, oneshot 0.2.1, event-listener 5.4.2,
#             left-right 0.11.8, st3 0.4.1, sharded-slab 0.1.7 and arcshift 0.4.2, each run the
#             way its own CI (for arcshift, its fast loom script) runs its loom tests (cfg flag,
#             features, LOOM_* variables, release or debug; for oneshot, every feature set that
#             `cargo hack --feature-powerset` makes with loom on);
#             prints per crate, feature set and run the tests passed / failed, the build time
#             and the test time.
# historical  oneshot 0.1.10, whose Receiver::drop did not handle the UNPARKING state (a panic
#             when a polled receiver is dropped while the sender wakes it; fixed in 0.1.11), with
#             the loom test that 0.1.11 added for it; prints whether each backend finds the bug,
#             after how many executions and how long. 0.1.11 runs the same test as a control.
#
# Everything happens in a scratch directory outside the repository: the crates are downloaded
# from crates.io and unpacked there, and the crate's repository manifest (Cargo.toml.orig in the
# package) is the Cargo.toml of both copies. Environment: SCRATCH (default
# /tmp/interleave-loom-crates), CLEAN=1 removes the scratch target directories first so that
# the build times are of clean builds. BACKENDS (default "loom interleave") chooses the runs,
# for example BACKENDS=interleave after a change to interleave-loom alone.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
which=${1:-all}
only=${2:-}
scratch=${SCRATCH:-/tmp/interleave-loom-crates}
backends=${BACKENDS:-loom interleave}
compat=$repo/crates/loom-compat
mkdir -p "$scratch/logs"
unset CARGO_TARGET_DIR RUSTFLAGS LOOM_MAX_PREEMPTIONS LOOM_MAX_BRANCHES LOOM_MAX_PERMUTATIONS LOOM_LOG

# Downloads <name>-<version> from crates.io and unpacks it under $scratch/src.
unpack() { # name version
  local crate=$1-$2
  if [ ! -d "$scratch/src/$crate" ]; then
    mkdir -p "$scratch/src"
    curl -sSfL "https://static.crates.io/crates/$1/$crate.crate" -o "$scratch/src/$crate.crate" || {
      echo "download of $crate failed" >&2
      return 1
    }
    tar xzf "$scratch/src/$crate.crate" -C "$scratch/src"
  fi
}

# Makes $scratch/<crate>/<backend>: the package with its repository manifest as Cargo.toml; for
# interleave, the lines that name loom now name interleave-loom (their features kept).
prepare() { # name version backend
  local crate=$1-$2 dir=$scratch/$1-$2/$3
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  cp -r "$scratch/src/$crate" "$dir"
  cp "$dir/Cargo.toml.orig" "$dir/Cargo.toml"
  if [ "$3" = interleave ]; then
    local to="package = \"interleave-loom\", path = \"$compat\""
    sed -i -E \
      -e "s|^loom = \"[^\"]*\"|loom = { $to }|" \
      -e "s|^(loom = \\{ *)version = \"[^\"]*\"|\\1$to|" "$dir/Cargo.toml"
    # Every `loom = ...` dependency line changes (sharded-slab names loom twice, as a dependency
    # and as a dev-dependency), and nothing else; a feature named loom (event-listener's
    # `loom = [...]`) stays.
    local changed lines
    changed=$(diff "$dir/Cargo.toml.orig" "$dir/Cargo.toml" | grep -c '^[<>]')
    lines=$(grep -cE '^loom = (\{|")' "$dir/Cargo.toml.orig")
    if [ "$changed" != $((2 * lines)) ] || [ "$lines" = 0 ]; then
      echo "$crate: expected a change of its loom lines only in Cargo.toml, got:" >&2
      diff "$dir/Cargo.toml.orig" "$dir/Cargo.toml" >&2
      return 1
    fi
    echo "  $crate Cargo.toml: $(diff "$dir/Cargo.toml.orig" "$dir/Cargo.toml" | grep '^>' | cut -c3-)"
  fi
}

# oneshot's loom CI runs `cargo hack test --feature-powerset` with loom always on; these are
# the sets it makes from oneshot's features std and async.
ONESHOT_FEATURE_SETS=(loom loom,std loom,async loom,std,async)

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Builds then runs `cargo test <args>` in $scratch/<crate>/<backend> with the environment given
# as NAME=value words before `--`; prints one result line.
run_suite() { # name version backend env... -- cargo-test-args...
  local name=$1 version=$2 backend=$3
  shift 3
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  # SUITE_LABEL (a feature set, say) tells runs of one crate apart in the output and the logs.
  local label=${SUITE_LABEL:-}
  local dir=$scratch/$name-$version/$backend log=$scratch/logs/$name-$version$label.$backend.log
  local target=$scratch/target/$name-$version.$backend
  [ "${CLEAN:-0}" = 1 ] && rm -rf "$target"
  local t0 t1 t2 status
  t0=$(now)
  (cd "$dir" && env "${envs[@]}" CARGO_TARGET_DIR="$target" cargo test --no-run "$@") >"$log" 2>&1
  status=$?
  t1=$(now)
  if [ $status -ne 0 ]; then
    printf '  %-24s %-10s build FAILED after %ss (log: %s)\n' "$name $version$label" "$backend" "$(secs "$t0" "$t1")" "$log"
    grep -m5 -E '^error' -A3 "$log" | sed 's/^/    /'
    return
  fi
  (cd "$dir" && env "${envs[@]}" CARGO_TARGET_DIR="$target" cargo test "$@") >>"$log" 2>&1
  status=$?
  t2=$(now)
  local passed failed ignored
  passed=$(sed -n 's/^test result: .*\. \([0-9]*\) passed.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
  failed=$(sed -n 's/^test result: .* \([0-9]*\) failed.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
  ignored=$(sed -n 's/^test result: .* \([0-9]*\) ignored.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
  printf '  %-24s %-10s %3d passed %2d failed %2d ignored   build %6ss   tests %6ss   exit %d   (log: %s)\n' \
    "$name $version$label" "$backend" "$passed" "$failed" "$ignored" "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" "$status" "$log"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name$label" "$version" "$backend" "$passed" "$failed" \
    "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" >>"$scratch/results.tsv"
}

# Unpacks <name>-<version> and runs its suite on each backend of $backends.
on_backends() { # name version env... -- cargo-test-args...
  local name=$1 version=$2
  [ -n "$only" ] && [ "$only" != "$name" ] && return
  unpack "$name" "$version" || return
  shift 2
  local backend
  for backend in $backends; do
    prepare "$name" "$version" "$backend" || return
    run_suite "$name" "$version" "$backend" "$@"
  done
}

# oneshot <version>'s loom tests under every feature set of its CI, on each backend; the
# second build of a set is incremental (one target directory per backend).
oneshot_feature_sets() { # version
  local version=$1 features backend
  [ -n "$only" ] && [ "$only" != oneshot ] && return
  unpack oneshot "$version" || return
  for backend in $backends; do
    prepare oneshot "$version" "$backend" || return
  done
  for features in "${ONESHOT_FEATURE_SETS[@]}"; do
    for backend in $backends; do
      SUITE_LABEL="[$features]" run_suite oneshot "$version" "$backend" \
        "RUSTFLAGS=--cfg oneshot_loom" LOOM_MAX_BRANCHES=100000 -- --features "$features"
    done
  done
}

if [ "$which" = suites ] || [ "$which" = all ]; then
  : >"$scratch/results.tsv"
  echo "Loom suites, real loom 0.7 vs interleave-loom ($scratch):"
  # smol-rs/concurrent-queue CI, job `loom`.
  on_backends concurrent-queue 2.5.0 RUSTFLAGS=--cfg=loom LOOM_MAX_PREEMPTIONS=4 -- \
    --release --test loom --features loom
  # tokio-rs/bytes CI, job `loom` (the loom tests are unit tests under cfg(all(test, loom))).
  on_backends bytes 1.12.2 "RUSTFLAGS=--cfg loom -Dwarnings" -- --lib
  # faern/oneshot CI, step "Test with loom": `cargo hack` over the feature sets that include
  # loom. The same feature sets run here one after the other, without needing cargo-hack.
  oneshot_feature_sets 0.2.1
  # smol-rs/event-listener CI, job `loom`.
  on_backends event-listener 5.4.2 RUSTFLAGS=--cfg=loom -- --release --test loom --features loom
  # jonhoo/left-right CI (safety.yml), job `loom`.
  on_backends left-right 0.11.8 "RUSTFLAGS=--cfg loom" LOOM_MAX_PREEMPTIONS=3 -- --release --test loom
  # asynchronics/st3 CI (ci.yml), job `loom` (its published loom is 0.5).
  on_backends st3 0.4.1 "RUSTFLAGS=--cfg st3_loom" LOOM_MAX_PREEMPTIONS=3 -- --tests --release
  # hawkw/sharded-slab bin/loom.sh (loom 0.5 with its checkpoint feature, which
  # interleave-loom accepts and ignores).
  on_backends sharded-slab 0.1.7 "RUSTFLAGS=--cfg loom -C debug-assertions=on" LOOM_MAX_PREEMPTIONS=2 \
    LOOM_CHECKPOINT_INTERVAL=1 -- --release --lib
  # avl/arcshift run_loom_fast.sh (nextest there, cargo test here): loom 0.7 with its checkpoint
  # feature, an optional dependency under cfg(loom); the slow models left out, as there.
  on_backends arcshift 0.4.2 "RUSTFLAGS=--cfg loom" LOOM_MAX_BRANCHES=2000 LOOM_MAX_PREEMPTIONS=1 -- \
    --lib --tests --release --features loom,disable_slow_tests,validate
fi

# Runs oneshot <version>'s loom test poll_then_drop_receiver_during_send (0.1.11's tests/loom.rs
# in place of the package's, which adds exactly that test) on one backend and prints whether
# it failed, after how many executions and how long.
historical_run() { # version backend
  local version=$1 backend=$2 dir=$scratch/oneshot-$1/$2
  local log=$scratch/logs/historical.oneshot-$1.$2.log target=$scratch/target/oneshot-$1.$2
  local test=poll_then_drop_receiver_during_send
  local envs=("RUSTFLAGS=--cfg oneshot_loom" LOOM_MAX_BRANCHES=100000 CARGO_TARGET_DIR="$target")
  cp "$scratch/src/oneshot-0.1.11/tests/loom.rs" "$dir/tests/loom.rs"
  (cd "$dir" && env "${envs[@]}" cargo test --features loom --test loom --no-run) >"$log" 2>&1 || {
    echo "  oneshot $version $backend: build failed (log: $log)"
    return
  }
  local t0 t1 status
  t0=$(now)
  (cd "$dir" && env "${envs[@]}" cargo test --features loom --test loom -- --exact "$test") >>"$log" 2>&1
  status=$?
  t1=$(now)
  local found=no executions=""
  [ $status -ne 0 ] && found=yes
  if [ "$backend" = interleave ]; then
    # interleave's report names the failing execution and its replay token.
    executions=$(grep -m1 -oE 'execution [0-9]+' "$log" | grep -oE '[0-9]+')
    [ -z "$executions" ] && executions=-
  else
    # loom prints no count on failure: a second run with LOOM_LOG=info tags every thread
    # switch with its iteration, and the last tag is the failing (or final) iteration.
    # (interleave prints no count when every execution passes: "-" then.)
    (cd "$dir" && env "${envs[@]}" LOOM_LOG=info cargo test --features loom --test loom -- --exact "$test" --nocapture) \
      >"$log.count" 2>&1
    executions=$(sed 's/\x1b\[[0-9;]*m//g' "$log.count" | grep -oE 'iter\{[0-9]+\}' | tail -1 | grep -oE '[0-9]+')
  fi
  printf '  oneshot %-7s %-10s bug found: %-3s  executions: %-6s  test time %ss  (log: %s)\n' \
    "$version" "$backend" "$found" "${executions:-?}" "$(secs "$t0" "$t1")" "$log"
  if [ "$found" = yes ]; then
    grep -m1 -E 'panicked at' -A1 "$log" | sed 's/^/      /'
    grep -m1 -iE 'replay' "$log" | sed 's/^/      /'
  fi
}

if [ "$which" = historical ] || [ "$which" = all ]; then
  echo
  echo "Historical bug: oneshot 0.1.10, Receiver::drop does not handle UNPARKING (fixed in 0.1.11):"
  unpack oneshot 0.1.10 && unpack oneshot 0.1.11 || exit 1
  for version in 0.1.10 0.1.11; do
    for backend in $backends; do
      prepare oneshot "$version" "$backend" >/dev/null || exit 1
      historical_run "$version" "$backend"
    done
  done
fi
