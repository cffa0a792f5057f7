# Sourced by the scripts that need a program from Debian's packages: `need <command or file> <package>
# [hint]` installs the package when the command (or the absolute path) is missing and this runs as
# root with apt-get; otherwise it stops with one line that names what to install by hand.

have() { case $1 in /*) [ -e "$1" ] ;; *) command -v "$1" >/dev/null ;; esac; }

need() {
  have "$1" && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing $2 (for $1) from Debian's packages" >&2
    # apt's own chatter (debconf notes) goes to a log, shown only when the install fails. A fresh
    # machine's package lists may be missing or stale: the first failure updates them once.
    local log
    log=$(mktemp)
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$2" >"$log" 2>&1 ||
      { apt-get update -qq >>"$log" 2>&1 && apt-get install -y -qq --no-install-recommends "$2" >>"$log" 2>&1; } ||
      cat "$log" >&2
    rm -f "$log"
  fi
  have "$1" && return
  echo "$1 is missing: install the Debian package $2 (apt-get install $2, as root)${3:-}" >&2
  exit 1
}
