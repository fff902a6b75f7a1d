#!/bin/sh
# make demo: a session in a temporary store, three checkpoint writes, the history, a section
# diff, then a sync of notes.md. Everything happens in a temporary directory.
set -eu
ckpt=$(cd "$(dirname "${1:-bin/ckpt}")" && pwd)/$(basename "${1:-bin/ckpt}")
sample=$(cd "$(dirname "$0")/../examples/demo" && pwd)
CKPT_HOME=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-demo.XXXXXX")
export CKPT_HOME
trap 'rm -rf "$CKPT_HOME"' EXIT

if [ -t 1 ]; then bold='\033[1m' plain='\033[0m'; else bold='' plain=''; fi
step() { printf "\n${bold}$ %s${plain}\n" "$*"; }

step ckpt init -s demo
"$ckpt" init -s demo
for n in 1 2 3; do
	step "ckpt write -s demo < checkpoint-$n.md"
	"$ckpt" write -s demo < "$sample/checkpoint-$n.md"
done
step ckpt log -s demo
"$ckpt" log -s demo
step ckpt diff -s demo --from HEAD~2
"$ckpt" diff -s demo --from HEAD~2
step "cp notes.md \$(ckpt path -s demo)/ && ckpt sync -s demo"
cp "$sample/notes.md" "$("$ckpt" path -s demo)/notes.md"
"$ckpt" sync -s demo
step ckpt kg list
"$ckpt" kg list
step "git -C \$(ckpt path -s demo) log --oneline   # an ordinary git repository"
git -C "$("$ckpt" path -s demo)" log --oneline
git -C "$("$ckpt" path -s demo)" fsck --full --strict
printf '\nThe store was %s (removed on exit).\n' "$CKPT_HOME"
