#!/bin/sh
# Builds the release tarball a technician carries to the box:
#   release/warehouse-controller-<version>-<platform>-<arch>-node<major>.tar.gz
# It holds everything the daemon needs on a box with Node.js 20 and no network, npm or
# compiler (install steps: systemd/README.md): dist/ compiled afresh, the built addon, the
# production packages, the files the daemon reads at run time, the systemd files, install.sh,
# VERSION and MANIFEST.sha256 (the checksum of every other file, checked by install.sh).
#
#   npm run release [-- --out DIR]     (after `npm ci`: it reuses node_modules and the addon)
#
# Beside it, <tarball>.sha256 for `sha256sum -c`. The last line on stdout is the tarball's path.
set -eu
umask 022 # the tree is read by the daemon's own user once installed

root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)

out=$root/release
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || { echo "release.sh: --out needs a directory" >&2; exit 64; }; out=$2; shift 2 ;;
    *) echo "release.sh: unknown argument '$1' (only --out DIR)" >&2; exit 64 ;;
  esac
done

fail() { echo "release.sh: $*" >&2; exit 1; }

mkdir -p "$out"
out=$(CDPATH='' cd -- "$out" && pwd) # --out is relative to where the script was started
cd "$root"

# The binaries in the tree (our addon, uWS, lmdb, serialport) are this machine's: the name and
# VERSION say which platform, architecture and Node ABI they need.
[ -d node_modules ] || fail "node_modules is missing; run 'npm ci' first"
version=$(node -p "require('./package.json').version")
platform=$(node -p process.platform)
arch=$(node -p process.arch)
abi=$(node -p process.versions.modules)
major=$(node -p "process.versions.node.split('.')[0]")
[ "$major" = 20 ] || fail "the daemon runs on Node.js 20 only (package.json engines); this is $(node -v)"
name=warehouse-controller-$version-$platform-$arch-node$major

stage=$(mktemp -d "${TMPDIR:-/tmp}/wh-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
tree=$stage/$name
mkdir -p "$tree"

echo "== addon (native/build.sh: a no-op when up to date)" >&2
sh native/build.sh >&2

echo "== dist/ (compiled afresh, so no stale file of the checkout's dist/ comes along)" >&2
# From a copy of src/ beside the output: the source maps then name ../src/*.ts as
# `npm run build` does, not a path back into this checkout. package.json comes along for its
# "type": "module", without which tsc would emit CommonJS.
mkdir -p "$stage/build"
cp -R src package.json tsconfig.json tsconfig.build.json "$stage/build/"
ln -s "$root/node_modules" "$stage/build/node_modules"
(cd "$stage/build" && "$root/node_modules/.bin/tsc" -p tsconfig.build.json)
mv "$stage/build/dist" "$tree/dist"
# The browser console's bundle (docs/console.md): esbuild, a devDependency, runs here, not on the
# box. Without source maps: they would name this checkout's paths.
(cd "$root" && node --import tsx scripts/build-console.ts --out "$tree/dist/console" --no-sourcemap) >&2
# package.json's `bin` commands (the CLI) are linked into /usr/bin by install.sh: they must
# be in the tree, start with #!, and be executable (tsc keeps the line, not the mode).
node -e '
  const bin = require(process.argv[1]).bin ?? {};
  for (const file of typeof bin === "string" ? [bin] : Object.values(bin)) console.log(file);
' "$root/package.json" | while read -r file; do
  [ -f "$tree/$file" ] || fail "package.json's bin names $file, which the build did not make"
  [ "$(head -c 2 "$tree/$file")" = '#!' ] || fail "package.json's bin $file does not start with #!"
  chmod 0755 "$tree/$file"
done

echo "== files" >&2
mkdir -p "$tree/native/build/Release" "$tree/firmware-protocol" "$tree/systemd" "$tree/docs"
cp native/build/Release/warehouse_native.node "$tree/native/build/Release/"
# Read at run time: package.json (version, package root), the message table of the bot link.
cp package.json package-lock.json README.md "$tree/"
cp firmware-protocol/messages.json "$tree/firmware-protocol/"
cp systemd/README.md systemd/warehouse-controller.service systemd/warehouse-controller.sysusers.conf "$tree/systemd/"
# The technician's guide is written elsewhere; it comes along once it exists.
if [ -f docs/operations.md ]; then cp docs/operations.md "$tree/docs/"; else rmdir "$tree/docs"; fi
cp scripts/install.sh "$tree/install.sh"
chmod 0755 "$tree/install.sh"

echo "== production packages (copied, then pruned offline)" >&2
# A fresh `npm ci --omit=dev` would need the network and would run this package's install
# script (cmake-js and a compiler); pruning a copy of the installed tree needs neither.
cp -R node_modules "$tree/"
(cd "$tree" && npm prune --omit=dev --ignore-scripts --offline --no-audit --no-fund >&2)
# This package's own scripts build from sources the release does not have (tsc, cmake-js).
(cd "$tree" && npm pkg delete scripts.install scripts.prepare scripts.prestart)
# Links to command-line tools the daemon never runs; a link could also lead out of the tree.
rm -rf "$tree/node_modules/.bin"
# uWS ships a binary per platform and Node ABI (about 100 MB); it loads
# binaries/uws_<platform>_<arch>_<abi>.node (src/uws.js), the dist/*.node copies are unused.
uws=$tree/node_modules/uWebSockets.js
[ -f "$uws/binaries/uws_${platform}_${arch}_$abi.node" ] || fail "uWebSockets.js has no binary for $platform-$arch, ABI $abi"
find "$uws/binaries" "$uws/dist" -name 'uws_*.node' ! -path "$uws/binaries/uws_${platform}_${arch}_$abi.node" -exec rm -f {} +

echo "== checks" >&2
# install.sh refuses anything but files and directories, and the manifest holds one name a line.
odd=$(find "$tree" ! -type f ! -type d)
[ -z "$odd" ] || fail "not a file or directory: $odd"
nl='
'
odd=$(find "$tree" -name "*$nl*" -o -name '*\\*')
[ -z "$odd" ] || fail "a file name with a newline or backslash: $odd"
# Nothing may point back into this checkout (a package that recorded where it was built).
if grep -rlF -- "$root/" "$tree" >&2; then fail "the files above name $root"; fi

commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && [ -n "$(git status --porcelain 2>/dev/null)" ]; then commit=$commit-dirty; fi
# shellcheck source=/dev/null
built_on=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}" || echo unknown)
cat >"$tree/VERSION" <<EOF
name=warehouse-controller
version=$version
platform=$platform
arch=$arch
node_abi=$abi
node=$(node -v)
commit=$commit
built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
built_on=$built_on
EOF

# sha256sum's own format, so `sha256sum -c MANIFEST.sha256` also checks an installed tree.
(cd "$tree" && find . -type f ! -path ./MANIFEST.sha256 | sed 's|^\./||' | LC_ALL=C sort | tr '\n' '\0' | xargs -0 sha256sum) >"$stage/MANIFEST.sha256"
mv "$stage/MANIFEST.sha256" "$tree/"

echo "== tarball" >&2
# Owned by root in the archive, whoever built it; written aside so a failed run leaves none.
tar --sort=name --owner=0 --group=0 --numeric-owner --mode='u+rwX,go+rX,go-w' \
  -czf "$out/$name.tar.gz.part" -C "$stage" "$name"
mv "$out/$name.tar.gz.part" "$out/$name.tar.gz"
# Carried beside the tarball, so the technician can check the copy that reached the box.
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "$(wc -l <"$tree/MANIFEST.sha256") files, $(du -h "$out/$name.tar.gz" | cut -f1)" >&2
echo "$out/$name.tar.gz"
