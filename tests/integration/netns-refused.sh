#!/bin/sh
# SPDX-License-Identifier: MIT
# netns-refused.sh SBXTRACE DENY POLICY: network.unshare = true where namespaces are refused
# (a container's default seccomp profile, issue 19) fails with 125 and names the cause, with
# the tracer on too (it used to report ptrace's "No such process").
set -u
sbx=$1 deny=$2 policy=$3
for ptrace in always never; do
	err=$("$deny" docker -- "$sbx" run -s network.mode=none -s network.unshare=true \
		-s tracer.ptrace=$ptrace "$policy" -- true 2>&1 >/dev/null)
	code=$?
	if [ "$code" != 125 ]; then
		echo "ptrace=$ptrace: exit $code, want 125: $err" >&2
		exit 1
	fi
	case $err in
	*"network namespace"*"Operation not permitted"*) ;;
	*)
		echo "ptrace=$ptrace: the cause is not named: $err" >&2
		exit 1
		;;
	esac
done
echo ok
