#!/usr/bin/env bash
# Prepares the shuttle half of scripts/compat-acceptance.sh: a scratch test crate whose test
# binary is shuttle 0.9.9's own tests/ tree, copied unchanged into the scratch directory (outside
# the repository), with a generated root that declares only the test modules that build against
# interleave-shuttle. A module that does not build is left out and listed, with the first compiler
# error, in $scratch/shuttle-excluded.tsv. shuttle's root keeps its helper functions; the
# generated root drops its `ui` test (trybuild compares shuttle's own compiler messages) and its
# `deny(warnings)`, since helpers used only by left-out modules become dead code.
#
#   scripts/shuttle-acceptance-crate.sh <scratch> <shuttle source dir> <repository>
set -uo pipefail
scratch=$1 shuttle_src=$2 repo=$3
crate=$scratch/shuttle-tests
rm -rf "$crate" && mkdir -p "$crate/src"
cp -r "$shuttle_src/tests" "$crate/tests-src"

# A test that names shuttle_engine, the crate of shuttle's internals, would keep its whole module
# from building. Such a test is cut out of the scratch copy (never out of the registry's) and
# listed in $scratch/shuttle-cut.tsv, which compat-acceptance.sh reports as skipped, so the
# module's other tests run.
cut=$scratch/shuttle-cut.tsv
: > "$cut"
cut_test() { # file (under tests/) test-path function reason
  local file=$crate/tests-src/$1 function=$3
  awk -v function_line="^    fn $function\\(\\)" '
    /^    #\[test\]$/ { held = $0; next }
    held != "" { if ($0 ~ function_line) { skip = 1; held = ""; next } print held; held = "" }
    skip == 1 { if ($0 ~ /^    }$/) skip = 0; next }
    { print }' "$file" > "$file.cut" && mv "$file.cut" "$file"
  printf '%s\t%s\n' "$2" "$4" >> "$cut"
}
cut_test basic/thread.rs basic::thread::thread_local::destroyed_last_key destroyed_last_key \
  "shuttle internals: uses shuttle_engine::thread_support::DestroyedLastKey and builds a LocalKey from its private fields; cut from the scratch copy so that the rest of basic::thread builds"
: > "$crate/src/lib.rs"
cat > "$crate/Cargo.toml" <<TOML
[package]
name = "shuttle-tests"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dev-dependencies]
shuttle = { package = "interleave-shuttle", path = "$repo/crates/shuttle-compat" }
futures = "0.3.15"
pin-project = "1.1.3"
proptest = "1.0.0"
proptest-derive = "0.5.0"
rand = "0.8"
regex = "1.5.5"
serde_json = "1"
tempfile = "3.2.0"
test-log = { version = "0.2.8", default-features = false, features = ["trace"] }
tracing = "0.1"
tracing-subscriber = { version = "0.3.9", features = ["env-filter"] }

[[test]]
name = "shuttle"
path = "tests-src/root.rs"
TOML

# Every leaf module: <group>/<leaf>.rs, except the groups' mod.rs and shuttle's feature-gated
# annotation tests.
mapfile -t leaves < <(cd "$crate/tests-src" && ls */*.rs | grep -v '/mod.rs$' | grep -v '^ui/' | grep -v '^basic/annotation.rs$' | sed 's/\.rs$//' | sort)
excluded=$scratch/shuttle-excluded.tsv
: > "$excluded"
declare -A left_out=()

write_root() {
  local root=$crate/tests-src/root.rs group leaf
  {
    echo '#![allow(dead_code, unused_imports)]'
    # shuttle's root without its module declarations, its deny(warnings) and its trybuild test.
    sed -e '/^#!\[deny(warnings)\]/d' -e '/^mod [a-z_]*;$/d' "$crate/tests-src/mod.rs" |
      awk 'BEGIN{skip=0} /^#\[test\]$/{getline nxt; if (nxt ~ /^fn ui\(\)/) {skip=1; next} else {print; print nxt; next}} skip==1{ if ($0 ~ /^}/) {skip=0}; next} {print}'
    for group in $(printf '%s\n' "${leaves[@]}" | cut -d/ -f1 | sort -u); do
      echo "#[path = \"$group\"]"
      echo "mod $group {"
      for leaf in "${leaves[@]}"; do
        [ "${leaf%%/*}" = "$group" ] || continue
        [ -z "${left_out[$leaf]:-}" ] || continue
        echo "    pub(crate) mod ${leaf#*/};"
      done
      echo "}"
    done
  } > "$root"
}

for round in 1 2 3 4 5 6; do
  write_root
  json=$scratch/shuttle-check.json
  (cd "$crate" && cargo test --no-run --release --message-format=json 2>/dev/null > "$json")
  status=$?
  [ $status -eq 0 ] && break
  # Files with errors, and the first error of each.
  found=0
  while IFS=$'\t' read -r file message; do
    leaf=$(sed -n 's|.*tests-src/\([a-z_]*/[a-z_]*\)\.rs$|\1|p' <<<"$file")
    if [ -n "$leaf" ] && [ -z "${left_out[$leaf]:-}" ]; then
      left_out[$leaf]=1
      printf '%s\t%s\n' "$leaf" "does not build against interleave-shuttle: $message" >> "$excluded"
      found=1
    fi
  done < <(python3 -c '
import json, sys
seen = set()
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-message":
        continue
    d = m["message"]
    if d.get("level") != "error" or not d.get("spans"):
        continue
    span = next((s for s in d["spans"] if s.get("is_primary")), d["spans"][0])
    f = span["file_name"]
    if f in seen:
        continue
    seen.add(f)
    print(f + "\t" + d["message"].replace("\t", " ").replace("\n", " ")[:140])
' "$json")
  if [ $found -eq 0 ]; then
    echo "the shuttle test crate does not build and no test module is to blame; see: (cd $crate && cargo test --no-run)" >&2
    break
  fi
done
