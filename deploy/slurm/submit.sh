#!/usr/bin/env bash
# Grade a course on a Slurm cluster: N array tasks, then the merge once all have succeeded.
#
#   COURSE_DIR=/shared/reward-drills SECRET_FILE=/shared/course.secret SHARDS=16 \
#       deploy/slurm/submit.sh [-- SBATCH_OPTION ...]
#
# Every path below must be on storage that every node sees, at the same path.
#   COURSE_DIR    the checkout whose .venv is built (required)
#   SHARDS        the number of array tasks (default 8)
#   SUBMITTED     the submissions (default $COURSE_DIR/submitted)
#   OUT_ROOT      shard-K-of-N/, merged/ and logs/ (default $COURSE_DIR/graded)
#   the secret    SECRET_FILE, else DRILLS_SECRET, else DRILLS_SECRET_FILE (the order in which
#                 `drills grade` reads them), else $COURSE_DIR/course.secret
#   SBATCH_EXTRA  sbatch options for both jobs (account, partition, QOS, CPUs...), split on
#                 spaces; options after `--` are added after them
#
# Nothing is queued unless the venv runs, the submissions and the secret are there, and the
# jobs of the previous submission into the same OUT_ROOT have all left the queue. The merge is
# cancelled by Slurm as soon as a task is cancelled, fails or times out
# (--kill-on-invalid-dep=yes): run this script again once the array's other tasks have ended;
# every shard resumes from its results cache and grades only what it lacks.
set -euo pipefail
umask 077 # the tasks inherit it (Slurm passes the submitter's umask): logs and outputs private

die() {
    echo "submit.sh: $*" >&2
    exit 2
}
abspath() { # an absolute path for $1, which need not exist yet (its folder must)
    local d
    d="$(cd "$(dirname "$1")" 2>/dev/null && pwd)" || die "no folder $(dirname "$1") (for $1)"
    echo "$d/$(basename "$1")"
}

extra=()
read -r -a extra <<<"${SBATCH_EXTRA:-}"
if [ $# -gt 0 ]; then
    [ "$1" = "--" ] || die "usage: COURSE_DIR=... deploy/slurm/submit.sh [-- SBATCH_OPTION ...] (got '$1')"
    shift
    extra+=("$@")
fi

[ -n "${COURSE_DIR:-}" ] || die "set COURSE_DIR to the reward-drills checkout whose .venv is built"
[ -d "$COURSE_DIR" ] || die "COURSE_DIR $COURSE_DIR is not a folder"
COURSE_DIR="$(cd "$COURSE_DIR" && pwd)"
SHARDS="${SHARDS:-8}"
[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || die "SHARDS must be a positive whole number, not '$SHARDS'"
SUBMITTED="${SUBMITTED:-$COURSE_DIR/submitted}"
OUT_ROOT="${OUT_ROOT:-$COURSE_DIR/graded}"
command -v sbatch >/dev/null || die "sbatch is not on PATH: run this on a Slurm login node"

# The venv and its base Python (a venv links to the Python it was made from).
venv="$COURSE_DIR/.venv"
[ -x "$venv/bin/drills" ] || die "no $venv/bin/drills: build the venv first (cd $COURSE_DIR && make .venv/.installed)"
"$venv/bin/python" -c "" 2>/dev/null ||
    die "$venv/bin/python does not run: the Python the venv was made from ($(sed -n 's/^home = //p' "$venv/pyvenv.cfg" 2>/dev/null)) is missing here; make the venv from a Python on shared storage"

# The submissions.
if [ -d "$SUBMITTED" ]; then
    [ -n "$(find "$SUBMITTED" -name '*.ipynb' -print -quit)" ] || die "no notebooks (*.ipynb) under SUBMITTED=$SUBMITTED"
elif [ ! -f "$SUBMITTED" ]; then
    die "SUBMITTED=$SUBMITTED does not exist (set SUBMITTED to the folder of submitted/<student>/<assignment>/)"
fi
SUBMITTED="$(abspath "$SUBMITTED")"

# The secret: resolved here once, so that every task uses the same one.
secret_file() { # $1: where it came from, $2: the file
    [ -r "$2" ] || die "cannot read the secret file $2 (from $1)"
    [ -n "$(tr -d '[:space:]' <"$2")" ] || die "the secret file $2 (from $1) is empty"
    abspath "$2"
}
if [ -n "${SECRET_FILE:-}" ]; then
    SECRET_FILE="$(secret_file SECRET_FILE "$SECRET_FILE")"
elif [ -n "${DRILLS_SECRET:-}" ]; then
    SECRET_FILE="" # the tasks inherit DRILLS_SECRET from this environment
elif [ -n "${DRILLS_SECRET_FILE:-}" ]; then
    SECRET_FILE="$(secret_file DRILLS_SECRET_FILE "$DRILLS_SECRET_FILE")"
elif [ -f "$COURSE_DIR/course.secret" ]; then
    SECRET_FILE="$(secret_file "the default" "$COURSE_DIR/course.secret")"
else
    die "no course secret: set SECRET_FILE (or DRILLS_SECRET_FILE) to a file on shared storage, or DRILLS_SECRET; nothing was queued"
fi

# The previous submission into this OUT_ROOT must be over: two tasks on one shard folder clash.
mkdir -p "$OUT_ROOT/logs" || die "cannot create $OUT_ROOT/logs (OUT_ROOT)"
OUT_ROOT="$(cd "$OUT_ROOT" && pwd)"
chmod 700 "$OUT_ROOT/logs"
record="$OUT_ROOT/logs/jobs"
if [ -s "$record" ]; then
    previous="$(tr -s ' \n' ',' <"$record" | sed 's/,$//')"
    left="$(squeue -h -o '%i %T' -j "$previous" 2>/dev/null || true)"
    if [ -n "$left" ]; then
        die "jobs $previous of the previous submission into $OUT_ROOT are still queued or running:
$left
wait until they have ended (squeue -j $previous) or cancel them (scancel ${previous//,/ }), then run submit.sh again; nothing was queued"
    fi
fi

export COURSE_DIR SHARDS SUBMITTED OUT_ROOT SECRET_FILE
here="$(cd "$(dirname "$0")" && pwd)"
grade=$(sbatch --parsable --array="1-$SHARDS" --export=ALL \
    --output="$OUT_ROOT/logs/drills-grade-%A_%a.log" --open-mode=append \
    ${extra[@]+"${extra[@]}"} "$here/grade-shard.sbatch")
grade="${grade%%;*}" # --parsable prints "id" or "id;cluster"
echo "$grade" >"$record"
merge=$(sbatch --parsable --dependency="afterok:$grade" --kill-on-invalid-dep=yes --export=ALL \
    --output="$OUT_ROOT/logs/drills-merge-%j.log" --open-mode=append \
    ${extra[@]+"${extra[@]}"} "$here/merge.sbatch")
merge="${merge%%;*}"
echo "$grade $merge" >"$record"
echo "grading: job $grade (array 1-$SHARDS); merge: job $merge"
echo "logs: $OUT_ROOT/logs; gradebook, once merged: $OUT_ROOT/merged/grades.csv"
