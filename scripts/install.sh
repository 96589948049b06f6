#!/bin/sh
# Installs this release of the warehouse controller. Run it as root from the unpacked tarball:
#
#   tar -xzf warehouse-controller-<version>-linux-x64-node20.tar.gz
#   sudo ./warehouse-controller-<version>-linux-x64-node20/install.sh [options]
#
#   --prefix DIR   install into the file system rooted at DIR (an image being built, a test)
#                  instead of /; paths inside the installed files stay those of the box
#   --no-systemd   for a box without systemd: no unit, no systemctl, the user made by useradd
#
# What goes where (each under DIR with --prefix):
#   /opt/warehouse-controller            this release, owned by root; the one it replaces is
#                                        kept as /opt/warehouse-controller.previous (rollback)
#   /usr/bin/<bin>                       each command of package.json's `bin`, run by the
#                                        release's own Node.js (runtime/bin/node)
#   /var/lib/warehouse-controller        the state (0750, user warehouse), never touched inside
#   /etc/warehouse-controller/environment  settings template, written only if absent
#   /etc/systemd/system/warehouse-controller.service, /usr/lib/sysusers.d/warehouse-controller.conf
#
# Needs coreutils only: the release carries its Node.js; no npm, no compiler, no network.
# It first checks every file against MANIFEST.sha256 and refuses a damaged or altered copy.
# Running it again, or with a newer release, keeps the state and the settings; an upgrade stops
# a running service, swaps the release and starts it again (systemd/README.md).
set -eu
umask 022 # the daemon's user reads the installed tree, whatever root's umask is

prefix=
use_systemd=yes
# Fixed by the unit (StateDirectory=, EnvironmentFile=, ExecStart=) and the sysusers file.
user=warehouse
app=/opt/warehouse-controller
state=/var/lib/warehouse-controller
config=/etc/warehouse-controller
unit=warehouse-controller.service
unit_dir=/etc/systemd/system
sysusers=/usr/lib/sysusers.d/warehouse-controller.conf

fail() {
  echo "install.sh: $*" >&2
  exit 1
}
say() { echo "install.sh: $*"; }

while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --no-systemd) use_systemd=no; shift ;;
    -h | --help) sed -n '2,/^set -eu$/{/^set -eu$/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) fail "unknown argument '$1' (see --help)" ;;
  esac
done

# Trailing slashes dropped, so --prefix / is the box itself and every path below is "$prefix/...".
prefix=$(printf '%s' "$prefix" | sed 's|/*$||')
case $prefix in '' | /?*) ;; *) fail "--prefix must be an absolute directory, not '$prefix'" ;; esac
case $prefix/ in */../* | */./*) fail "--prefix must not contain . or .. components: '$prefix'" ;; esac

root=no
[ "$(id -u)" -eq 0 ] && root=yes
# Under a prefix of one's own, the user and the ownership are all that needs root: skipped.
[ "$root" = yes ] || [ -n "$prefix" ] || fail "run as root (or with --prefix DIR, for a tree of your own)"

dest=$prefix$app
src=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P)
# The old release and its spare are moved and deleted below: the new one must not be in them.
if [ -d "$(dirname -- "$dest")" ]; then
  real=$(CDPATH='' cd -- "$(dirname -- "$dest")" && pwd -P)/$(basename -- "$dest")
else
  real=$dest
fi
for dir in "$dest" "$real"; do
  for spot in "$dir" "$dir.previous" "$dir.new"; do
    case $src/ in "$spot"/*) fail "unpack the release elsewhere (e.g. in /tmp), not in $spot" ;; esac
  done
done

# Whatever is there is moved aside below: it must be an earlier release (VERSION, or a checkout
# installed with npm ci as before the tarball), or empty, never some other directory.
if [ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null || echo file)" ] &&
  ! grep -qx 'name=warehouse-controller' "$dest/VERSION" 2>/dev/null &&
  ! grep -q '"name": "warehouse-controller"' "$dest/package.json" 2>/dev/null; then
  fail "$dest is not an earlier warehouse-controller release: move it away first"
fi

# Every listed file with its checksum, nothing unlisted, nothing but files and directories
# (a link could lead out of the tree). Run on the unpacked release and again on the copy.
verify() (
  cd "$1"
  if [ ! -f MANIFEST.sha256 ] || [ ! -f VERSION ]; then
    echo "install.sh: $1 has no MANIFEST.sha256 or VERSION: not an unpacked release" >&2
    exit 1
  fi
  odd=$(find . ! -type f ! -type d)
  [ -z "$odd" ] || { echo "install.sh: not a file or directory: $odd" >&2; exit 1; }
  if ! bad=$(LC_ALL=C sha256sum --check --strict --quiet MANIFEST.sha256 2>&1); then
    printf '%s\n' "$bad" | head -n 20 >&2
    echo "install.sh: $1 differs from its MANIFEST.sha256 (damaged or altered): nothing installed" >&2
    exit 1
  fi
  listed=$(sed 's/^[0-9a-f]\{64\}  //' MANIFEST.sha256 | LC_ALL=C sort)
  present=$(find . -type f ! -path ./MANIFEST.sha256 | sed 's|^\./||' | LC_ALL=C sort)
  if [ "$listed" != "$present" ]; then
    # Each list holds a name once: a name seen once in both is in only one (too many for argv).
    printf '%s\n%s\n' "$listed" "$present" | LC_ALL=C sort | uniq -u | sed 's/^/not in MANIFEST.sha256: /' | head -n 20 >&2
    echo "install.sh: $1 has files its MANIFEST.sha256 does not list: nothing installed" >&2
    exit 1
  fi
)

verify "$src"
field() { sed -n "s/^$1=//p" "$src/VERSION"; }
version=$(field version)
say "release $version ($(field commit)), checksums verified"

# The unit and the commands run the release's own Node.js. Its platform and ABI are the
# release's by construction; this checks that it runs on this box (its libc) at all.
node=$src/runtime/bin/node
[ -x "$node" ] || fail "this release carries no runtime/bin/node: it is damaged"
"$node" -e '' 2>/dev/null || fail "the release's Node.js does not run on this box ($(uname -m), $(ldd --version 2>&1 | head -n 1)): nothing installed"
have=$("$node" -p 'process.platform + "-" + process.arch + " ABI " + process.versions.modules')
want="$(field platform)-$(field arch) ABI $(field node_abi)"
[ "$have" = "$want" ] || fail "the release's Node.js is $have, its binaries need $want: it is damaged"

# Copy next to the release first: the running one keeps running meanwhile, and a full disk or
# a binary this box cannot load stops the install before anything was replaced.
new=$dest.new
rm -rf "$new"
trap 'rm -rf "$new"' EXIT
mkdir -p "$(dirname -- "$dest")"
cp -R "$src" "$new"
verify "$new"
"$new/runtime/bin/node" -e 'require(process.argv[1])' "$new/native/build/Release/warehouse_native.node" ||
  fail "the native addon does not load on this box (built on $(field built_on)): nothing installed"
# uWS needs a newer libc for the newer Node.js lines (docs/decisions.md): said here, not at the first start.
(cd "$new" && "$new/runtime/bin/node" -e 'require("uWebSockets.js")') ||
  fail "the HTTP server's binary does not load on this box (built on $(field built_on)): nothing installed"

# The service user, as the sysusers file says: system account, own group, in dialout, no login.
# Under a prefix the accounts go to DIR/etc; ownership then uses the ids found there.
uid=
gid=
if [ "$root" = yes ]; then
  mkdir -p "$prefix/etc"
  if [ "$use_systemd" = yes ] && command -v systemd-sysusers >/dev/null 2>&1; then
    install -D -m 0644 "$new/systemd/warehouse-controller.sysusers.conf" "$prefix$sysusers"
    if [ -n "$prefix" ]; then
      systemd-sysusers --root="$prefix" "$(basename -- "$sysusers")"
    else
      systemd-sysusers "$(basename -- "$sysusers")"
    fi
  else
    if [ -n "$prefix" ]; then
      set -- --prefix "$prefix"
      # useradd edits these files but does not create them in an empty root.
      for f in passwd group; do [ -e "$prefix/etc/$f" ] || install -m 0644 /dev/null "$prefix/etc/$f"; done
      for f in shadow gshadow; do [ -e "$prefix/etc/$f" ] || install -m 0640 /dev/null "$prefix/etc/$f"; done
    else
      set --
    fi
    grep -q '^dialout:' "$prefix/etc/group" || groupadd "$@" --system dialout
    grep -q "^$user:" "$prefix/etc/group" || groupadd "$@" --system "$user"
    if grep -q "^$user:" "$prefix/etc/passwd"; then
      usermod "$@" --append --groups dialout "$user"
    else
      useradd "$@" --system --gid "$user" --groups dialout --home-dir "$state" --no-create-home \
        --shell /usr/sbin/nologin --comment "Warehouse controller daemon" "$user"
    fi
  fi
  uid=$(awk -F: -v u="$user" '$1 == u { print $3 }' "$prefix/etc/passwd")
  gid=$(awk -F: -v u="$user" '$1 == u { print $4 }' "$prefix/etc/passwd")
  if [ -z "$uid" ] || [ -z "$gid" ]; then fail "user $user was not created in $prefix/etc/passwd"; fi
else
  say "not root: no user $user, and $prefix$state is owned by $(id -un)"
fi

# LMDB, the TLS key and the bootstrap credentials live here: the daemon's user only. An
# upgrade changes nothing inside.
mkdir -p "$prefix$state"
[ -z "$uid" ] || chown "$uid:$gid" "$prefix$state"
chmod 0750 "$prefix$state"

# Every line commented out: the settings are the technician's, and an unknown WAREHOUSE_* name
# would stop the daemon. Group-readable by the daemon's user for the commands run as it.
if [ ! -e "$prefix$config/environment" ]; then
  mkdir -p "$prefix$config"
  cat >"$prefix$config/environment.new" <<'EOF'
# Settings of the warehouse controller, NAME=value lines read by its systemd unit
# (EnvironmentFile=). Kept as it is by upgrades. After a change:
#   systemctl restart warehouse-controller
# Every variable and its default: /opt/warehouse-controller/README.md, "Configure it".
# A misspelt WAREHOUSE_* name stops the start with exit status 78 (see journalctl).
#
# The site layout file; `demo` is the simulated demo site.
#WAREHOUSE_SITE=/etc/warehouse-controller/site.json
# The site's TLS certificate and key (PEM); without them a self-signed one is made in the
# state directory. The key must be readable by the user warehouse (chgrp warehouse; 0640).
#WAREHOUSE_TLS_CERT=/etc/warehouse-controller/tls/cert.pem
#WAREHOUSE_TLS_KEY=/etc/warehouse-controller/tls/key.pem
#WAREHOUSE_TIMEZONE=Europe/Berlin
#WAREHOUSE_PORT=8443
#WAREHOUSE_LOG_LEVEL=info
# Where support issues are forwarded to, if anywhere.
#WAREHOUSE_SUPPORT_URL=https://support.example.com/issues
EOF
  [ -z "$gid" ] || chgrp "$gid" "$prefix$config/environment.new"
  chmod 0640 "$prefix$config/environment.new"
  mv "$prefix$config/environment.new" "$prefix$config/environment"
  say "settings template written to $prefix$config/environment"
else
  say "$prefix$config/environment kept as it is"
fi

# Only a box booted with systemd (sd_booted) is told: in containers, image builds and under a
# prefix the unit is installed for the next boot and systemctl is left alone.
running=no
if [ -z "$prefix" ] && [ "$use_systemd" = yes ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
  running=yes
fi
was_active=no
if [ "$running" = yes ] && systemctl is-active --quiet "$unit"; then
  was_active=yes
  say "stopping $unit"
  systemctl stop "$unit"
fi

if [ -e "$dest" ]; then
  rm -rf "$dest.previous"
  mv "$dest" "$dest.previous"
  say "the release it replaces is kept as $dest.previous"
fi
mv "$new" "$dest"
trap - EXIT

# The commands of package.json's `bin` (the CLI): a small script that runs the release's Node.js
# on it, found from the script's own place so that it also holds in an image under a prefix.
"$node" -e '
  const bin = require(process.argv[1]).bin ?? {};
  const entries = typeof bin === "string" ? [["warehouse-controller", bin]] : Object.entries(bin);
  for (const [name, file] of entries) console.log(name + " " + file);
' "$dest/package.json" | while read -r name file; do
  case $name/$file in *[!A-Za-z0-9._/-]* | .* | *//* | */../* | */./*) fail "odd bin entry in package.json: $name $file" ;; esac
  case $file in ./*) file=${file#./} ;; esac
  if [ -f "$dest/$file" ]; then
    mkdir -p "$prefix/usr/bin"
    rm -f "$prefix/usr/bin/$name.new"
    printf '#!/bin/sh\n# Installed by %s install.sh: runs %s with the release'"'"'s Node.js.\nhere=$(dirname -- "$(readlink -f -- "$0")")\nexec "$here/../..%s/runtime/bin/node" "$here/../..%s/%s" "$@"\n' \
      "$version" "$app/$file" "$app" "$app" "$file" >"$prefix/usr/bin/$name.new"
    chmod 0755 "$prefix/usr/bin/$name.new"
    mv -f "$prefix/usr/bin/$name.new" "$prefix/usr/bin/$name"
    say "$prefix/usr/bin/$name runs $app/$file"
  fi
done

if [ "$use_systemd" = yes ]; then
  install -D -m 0644 "$dest/systemd/$unit" "$prefix$unit_dir/$unit"
  if [ "$running" = yes ]; then
    systemctl daemon-reload
  else
    say "systemd is not running here: $prefix$unit_dir/$unit installed, systemctl skipped"
  fi
fi

if [ "$was_active" = yes ]; then
  say "starting $unit"
  systemctl start "$unit"
elif [ "$running" = yes ]; then
  say "start it with: systemctl enable --now $unit"
fi
say "installed $version in $dest"
