#!/usr/bin/env bash
# Grade a course on Kubernetes, from nothing (or from a previous run) to a merged gradebook:
#
#   kubectl create secret generic drills-course-secret --from-file=course.secret
#   SHARDS=8 IMAGE=registry.example.edu/reward-drills@sha256:<digest> deploy/k8s/apply.sh
#
# SHARDS is the one place the shard count is set: it becomes the grading Job's completions
# and its pods' SHARDS (the merge Job takes whatever shard folders there are). IMAGE is the
# image built from deploy/Dockerfile and pushed, by digest (`docker push` prints it), so that
# every pod runs the same bytes. A Job's pod template cannot be changed once created, so the
# previous run's Jobs are deleted first; their outputs stay on the volume and every shard
# resumes from its results cache (re-applying after a failure grades only what is missing).
# Then the grading Job is applied and waited for until it completes or fails (backoffLimit
# failed pods, or its activeDeadlineSeconds): a failed Job ends the wait at once, with exit
# status 1 and the commands that show why; only a completed one is followed by the merge Job.
#
#   deploy/k8s/apply.sh --render   print the manifests as they would be applied, and stop
#
# Before the Jobs it applies network-policy.yaml: no network for the pods.
#
# SECCOMP_PROFILE=drills-bwrap.json: the grading pods run under that Localhost seccomp profile
# (a path below the kubelet's seccomp folder, /var/lib/kubelet/seccomp by default, on every
# node) instead of the runtime's default, which stops bubblewrap; write it with
# seccomp/bwrap_profile.py and install it with seccomp/install-profile.yaml:
#
#   IMAGE=registry.example.edu/reward-drills@sha256:<digest> \
#       deploy/k8s/apply.sh --render-profile-installer    print the installer DaemonSet, stop
#
# KUBECTL (default kubectl) and WAIT_TIMEOUT (default 7h, past the Job's own deadline) may
# be set.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KUBECTL="${KUBECTL:-kubectl}"
WAIT_TIMEOUT="${WAIT_TIMEOUT:-7h}"
SECCOMP_PROFILE="${SECCOMP_PROFILE:-}"
: "${IMAGE:?set IMAGE to the pushed image by digest, e.g. registry.example.edu/reward-drills@sha256:<64 hex digits>}"
if ! [[ "$IMAGE" =~ ^[^@[:space:]]+@sha256:[0-9a-f]{64}$ ]] || [[ "$IMAGE" =~ @sha256:0{64}$ ]]; then
    echo "apply.sh: IMAGE must name the pushed image by its digest (name@sha256:<64 hex>)," \
        "not '$IMAGE': a tag can move between pods" >&2
    exit 2
fi
if [ "${1:-}" = "--render-profile-installer" ]; then
    sed -e "s|registry\.example\.edu/reward-drills@sha256:0\{64\}|$IMAGE|" \
        "$HERE/seccomp/install-profile.yaml"
    exit 0
fi
: "${SHARDS:?set SHARDS to the number of shards (pods of the grading Job), e.g. SHARDS=8}"
if ! [[ "$SHARDS" =~ ^[1-9][0-9]*$ ]]; then
    echo "apply.sh: SHARDS must be a whole number >= 1, not '$SHARDS'" >&2
    exit 2
fi
# the kubelet takes a relative path that descends from its seccomp folder
if [ -n "$SECCOMP_PROFILE" ] && { ! [[ "$SECCOMP_PROFILE" =~ ^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$ ]] \
    || [[ "/$SECCOMP_PROFILE/" == */../* ]] || [[ "/$SECCOMP_PROFILE/" == */./* ]]; }; then
    echo "apply.sh: SECCOMP_PROFILE must be a relative path below the kubelet's seccomp" \
        "folder, such as drills-bwrap.json, not '$SECCOMP_PROFILE'" >&2
    exit 2
fi
if [ -n "$SECCOMP_PROFILE" ]; then
    SECCOMP="{type: Localhost, localhostProfile: $SECCOMP_PROFILE}"
else
    SECCOMP="{type: RuntimeDefault}"
fi

render() {
    sed -e "s|registry\.example\.edu/reward-drills@sha256:0\{64\}|$IMAGE|" \
        -e "s|^\(  completions: \)[0-9]*\( # set by apply.sh from SHARDS\)$|\1$SHARDS\2|" \
        -e "s|^\( *value: \)\"[0-9]*\"\( # set by apply.sh from SHARDS\)$|\1\"$SHARDS\"\2|" \
        -e "s|^\( *seccompProfile: \){type: RuntimeDefault}\( # set by apply.sh from SECCOMP_PROFILE\)$|\1$SECCOMP\2|" \
        "$HERE/$1"
}

if [ "${1:-}" = "--render" ]; then
    cat "$HERE/network-policy.yaml"
    echo "---"
    render grade-indexed-job.yaml
    echo "---"
    render merge-job.yaml
    exit 0
fi

wait_job() { # until job/$1 is Complete (status 0) or Failed (status 1)
    local job="$1" done_pid failed_pid
    "$KUBECTL" wait --for=condition=complete --timeout="$WAIT_TIMEOUT" "job/$job" >/dev/null &
    done_pid=$!
    "$KUBECTL" wait --for=condition=failed --timeout="$WAIT_TIMEOUT" "job/$job" >/dev/null &
    failed_pid=$!
    while kill -0 "$done_pid" 2>/dev/null && kill -0 "$failed_pid" 2>/dev/null; do
        sleep 1
    done
    if ! kill -0 "$done_pid" 2>/dev/null && wait "$done_pid"; then
        kill "$failed_pid" 2>/dev/null || true
        echo "job/$job completed"
        return 0
    fi
    kill "$done_pid" "$failed_pid" 2>/dev/null || true
    echo "apply.sh: job/$job failed or did not end within $WAIT_TIMEOUT; see" \
        "'$KUBECTL describe job/$job' and '$KUBECTL logs -l job-name=$job --prefix'." \
        "Fix the cause and run apply.sh again: finished shards come from their caches." >&2
    return 1
}

"$KUBECTL" apply -f "$HERE/network-policy.yaml"
"$KUBECTL" delete job drills-grade drills-merge --ignore-not-found --wait=true
render grade-indexed-job.yaml | "$KUBECTL" apply -f -
wait_job drills-grade || exit 1
render merge-job.yaml | "$KUBECTL" apply -f -
wait_job drills-merge || exit 1
echo "merged gradebook: /course/graded/merged on the drills-course volume"
