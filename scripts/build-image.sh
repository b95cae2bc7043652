#!/usr/bin/env bash
# Builds an OCI image of gauntlet with buildah from this checkout's own
# Release build: no base image is pulled. The image holds build/gauntlet and
# gnuplot (for report.html), the shared libraries they load (as ldd resolves
# them here) and the dynamic loader, the Python SDK with its generated
# classes, and scenarios/ with the traces in data/, under /opt/gauntlet, which is also the working
# folder. `buildah run IMAGE-CONTAINER -- gauntlet run scenarios/demo.yaml`
# runs a scenario inside it. Kubernetes launchers
# (gauntlet sweep --emit k8s) run it as: /opt/gauntlet/bin/gauntlet or, with
# the default --binary, gauntlet on the image's PATH.
#
# usage: scripts/build-image.sh [IMAGE]   (default gauntlet:latest)
#        then e.g. buildah push gauntlet:latest docker://registry.example/gauntlet:latest
set -euo pipefail

cd "$(dirname "$0")/.."
image="${1:-gauntlet:latest}"
command -v buildah >/dev/null || { echo "buildah is missing (Debian: apt-get install buildah)" >&2; exit 1; }
[ -x build/gauntlet ] || { echo "build/gauntlet is missing: run scripts/quickstart.sh build first" >&2; exit 1; }

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/opt/gauntlet/bin" "$root/opt/gauntlet/python" "$root/tmp"
chmod 1777 "$root/tmp"
# A program and every library it loads, at the paths the loader looks for
# them (mawk, Debian's awk, has no \s: the loader's own line is matched with
# [ \t]).
copy_with_libraries() {
  local program="$1" destination="$2"
  mkdir -p "$root$(dirname "$destination")"
  cp -L "$program" "$root$destination"
  ldd "$program" | awk '/=> \// {print $3} /^[ \t]*\// {print $1}' | sort -u | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}
copy_with_libraries build/gauntlet /opt/gauntlet/bin/gauntlet
# Runs draw report.html's plots with gnuplot.
gnuplot="$(command -v gnuplot)" || { echo "gnuplot is missing (Debian: apt-get install gnuplot-nox)" >&2; exit 1; }
copy_with_libraries "$(readlink -f "$gnuplot")" /opt/gauntlet/bin/gnuplot
[ -d /usr/share/gnuplot ] && mkdir -p "$root/usr/share" && cp -r /usr/share/gnuplot "$root/usr/share/"
cp -r scenarios data "$root/opt/gauntlet/"
[ -d build/python/gauntlet_detector ] && cp -r build/python/gauntlet_detector "$root/opt/gauntlet/python/"

container="$(buildah from scratch)"
trap 'buildah rm "$container" >/dev/null 2>&1 || true; rm -rf "$root"' EXIT
buildah copy "$container" "$root" / >/dev/null
buildah config --workingdir /opt/gauntlet --env PATH=/opt/gauntlet/bin --entrypoint '["gauntlet"]' \
  --label org.opencontainers.image.title=gauntlet "$container"
buildah commit "$container" "$image" >/dev/null
echo "built $image"
