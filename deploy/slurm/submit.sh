#!/usr/bin/env bash
# Grade a course on a Slurm cluster: N array tasks, then the merge once all have succeeded.
#
#   COURSE_DIR=/path/to/reward-drills SHARDS=16 deploy/slurm/submit.sh
#
# Optional: SUBMITTED (default $COURSE_DIR/submitted), OUT_ROOT ($COURSE_DIR/graded),
# SECRET_FILE ($COURSE_DIR/course.secret). Prints the two job ids.
set -euo pipefail
: "${COURSE_DIR:?set COURSE_DIR}"
SHARDS="${SHARDS:-8}"
here="$(cd "$(dirname "$0")" && pwd)"
export COURSE_DIR SHARDS
grade=$(sbatch --parsable --array="1-$SHARDS" --export=ALL "$here/grade-shard.sbatch")
merge=$(sbatch --parsable --dependency="afterok:$grade" --export=ALL "$here/merge.sbatch")
echo "grading: job $grade (array 1-$SHARDS); merge: job $merge"
