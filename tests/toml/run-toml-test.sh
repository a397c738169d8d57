#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the toml-test conformance suite against our decoder.
# usage: run-toml-test.sh RUNNER DECODER; exits 77 (skip) when RUNNER is absent.
runner=$1 decoder=$2
if [ ! -x "$runner" ]; then
	echo "toml-test runner not found at $runner, skipping" >&2
	exit 77
fi
exec "$runner" -j2 -- "$decoder"
