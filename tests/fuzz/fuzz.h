/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Every fuzzer defines this; libFuzzer or fuzz-main.c calls it once per input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs above this are ignored: parsers are linear, longer inputs only slow the search. */
#define FUZZ_MAX_INPUT (64 * 1024)
