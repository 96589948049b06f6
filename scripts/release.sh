#!/bin/sh
# Builds the release tarball a technician carries to the box:
#   release/warehouse-controller-<version>-<platform>-<arch>-node<major>.tar.gz
# It holds everything the daemon needs on a box with no Node.js, network, npm or compiler
# (install steps: systemd/README.md): the Node.js runtime this build was tested with
# (runtime/bin/node), dist/ compiled afresh, the built addon, the production packages, the files
# the daemon reads at run time, the systemd files, install.sh, VERSION, a CycloneDX SBOM of the
# production packages (sbom.cdx.json) and MANIFEST.sha256 (the checksum of every other file,
# checked by install.sh).
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
# The Node.js lines the daemon is tested on (package.json engines, .ci/run).
case $major in 20 | 22 | 24) ;; *) fail "the daemon runs on Node.js 20, 22 or 24 (package.json engines); this is $(node -v)" ;; esac
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
# Every Markdown file of docs/: the daemon serves them under /api/docs/ (src/http/routes/docs.ts),
# the API's description links them, and the technician reads operations.md, monitoring.md and
# high-availability.md on the box.
cp docs/*.md "$tree/docs/"
# The Grafana dashboard monitoring.md tells the site to import.
mkdir -p "$tree/docs/monitoring"
cp docs/monitoring/grafana-warehouse-controller.json "$tree/docs/monitoring/"
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
# Nested ones too (a package's own copy of a dependency, as @grpc/grpc-js carries proto-loader).
find "$tree/node_modules" -type d -name .bin -prune -exec rm -rf {} +
# Type declarations only a compiler reads (protobufjs, under the etcd client, lists @types/node
# among its dependencies): nothing of them runs.
rm -rf "$tree/node_modules/@types"
# uWS ships a binary per platform and Node ABI (about 250 MB); its loader (uws.js) requires
# uws_<platform>_<arch>_<abi>.node beside it. Only that one comes along, and only as reviewed.
uws=$tree/node_modules/uWebSockets.js
binary=uws_${platform}_${arch}_$abi.node
[ -f "$uws/$binary" ] || fail "uWebSockets.js has no binary for $platform-$arch, ABI $abi"
reviewed=$(sed -n "s|^\([0-9a-f]\{64\}\)  node_modules/uWebSockets.js/$binary\$|\1|p" scripts/reviewed-binaries.sha256)
[ -n "$reviewed" ] || fail "$binary is not in scripts/reviewed-binaries.sha256: review it first (docs/decisions.md)"
[ "$(sha256sum "$uws/$binary" | cut -d' ' -f1)" = "$reviewed" ] || fail "$binary differs from the reviewed one (scripts/reviewed-binaries.sha256)"
find "$uws" -name 'uws_*.node' ! -name "$binary" -exec rm -f {} +
# Its documentation, examples, tests and sources are not run.
(cd "$uws" && rm -rf docs examples tests mvp misc src scripts build.c Makefile logo.svg)

echo "== runtime (the Node.js this build ran on)" >&2
# The box needs no Node.js of its own: the unit and the commands run this one. It is a
# self-contained build (libc and libstdc++ only), as the official and NodeSource builds are.
mkdir -p "$tree/runtime/bin"
cp "$(node -p process.execPath)" "$tree/runtime/bin/node"
chmod 0755 "$tree/runtime/bin/node"
needs=$(ldd "$tree/runtime/bin/node" | awk '$1 !~ /^(linux-vdso\.so|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so|\/lib64\/ld-linux)/ { print $1 }')
[ -z "$needs" ] || fail "$(node -p process.execPath) needs shared libraries a box may not have: $needs"
bindir=$(dirname "$(node -p process.execPath)")
for licence in "$bindir/../LICENSE" "$bindir/../share/doc/node/LICENSE" /usr/share/doc/nodejs/LICENSE; do
  if [ -f "$licence" ]; then cp "$licence" "$tree/runtime/LICENSE"; break; fi
done
[ -f "$tree/runtime/LICENSE" ] || fail "the Node.js licence was not found beside $(node -p process.execPath)"

echo "== SBOM (CycloneDX, production packages)" >&2
# From the lockfile (which npm ci installed exactly), then cut to the packages the pruned tree
# holds: in that tree npm sbom refuses the dev packages package.json names and the tree no
# longer has, and its own --omit dev (npm 11.19) leaves out production packages (tar, uuid).
npm sbom --sbom-format cyclonedx --package-lock-only >"$stage/sbom.cdx.json" || fail "npm sbom failed"
# npm lists packages only: the runtime the release carries is added, so a scanner matches
# Node.js's own advisories too.
node -e '
  const fs = require("fs");
  const path = require("path");
  const [file, version, tree] = process.argv.slice(1);
  const bom = JSON.parse(fs.readFileSync(file, "utf8"));
  const shipped = new Set();
  const walk = (dir) => {
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(".")) continue;
      const at = path.join(dir, name);
      if (name.startsWith("@")) { walk(at); continue; }
      const manifest = path.join(at, "package.json");
      if (fs.existsSync(manifest)) {
        const p = JSON.parse(fs.readFileSync(manifest, "utf8"));
        shipped.add(p.name + "@" + p.version);
      }
      if (fs.existsSync(path.join(at, "node_modules"))) walk(path.join(at, "node_modules"));
    }
  };
  walk(path.join(tree, "node_modules"));
  const purlName = (c) => decodeURIComponent(c.purl.replace(/^pkg:npm\//, "").replace(/@[^@]*$/, ""));
  bom.components = bom.components.filter((c) => c.purl && shipped.has(purlName(c) + "@" + c.version));
  const refs = new Set(bom.components.map((c) => c["bom-ref"]).concat(bom.metadata.component["bom-ref"]));
  bom.dependencies = (bom.dependencies || []).filter((d) => refs.has(d.ref)).map((d) => ({ ...d, dependsOn: (d.dependsOn || []).filter((r) => refs.has(r)) }));
  // npm names the root after the checkout'"'"'s folder.
  const pkg = require("./package.json");
  Object.assign(bom.metadata.component, { name: pkg.name, version: pkg.version, type: "application" });
  bom.components.push({ type: "platform", name: "node", version: version.slice(1), purl: "pkg:generic/nodejs/node@" + version.slice(1), "bom-ref": "runtime:node@" + version.slice(1),
    description: "Node.js runtime carried by the release (runtime/bin/node)", licenses: [{ license: { id: "MIT" } }] });
  // uwebsockets declares ISC; the LICENSE it ships (uWS.js) is Apache-2.0 (docs/decisions.md).
  for (const c of bom.components) if (c.purl && c.purl.startsWith("pkg:npm/uwebsockets@")) {
    c.licenses = [{ license: { id: "Apache-2.0" } }];
    c.properties = [...(c.properties || []), { name: "warehouse-controller:licence-note", value: "package.json says ISC; its LICENSE file, from uWebSockets.js, is Apache-2.0" }];
  }
  fs.writeFileSync(file, JSON.stringify(bom, null, 2) + "\n");
' "$stage/sbom.cdx.json" "$(node -v)" "$tree"
mv "$stage/sbom.cdx.json" "$tree/sbom.cdx.json"

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
runtime=runtime/bin/node
uws=$(node -p 'require("./node_modules/uWebSockets.js/package.json").name + "@" + require("./node_modules/uWebSockets.js/package.json").version') $binary
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
