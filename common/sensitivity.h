/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * How private a file is, as a [[rule]]'s level says (docs/policy.md, network.ratchet in
 * docs/network.md). Here, below policy/, because it crosses the handler interface
 * (common/handler.h): an open of such a file asks the host to ratchet the network down
 * (EmuHost.sensitive_open). A plain value with no behaviour of its own; its parser and
 * printer (sensitivity_to_string()) stay in policy/, which includes this.
 */

#include <errno.h>

typedef enum Sensitivity {
	SENSITIVITY_NONE,
	SENSITIVITY_INTERNAL,
	SENSITIVITY_CONFIDENTIAL,
	SENSITIVITY_SECRET,
	_SENSITIVITY_MAX,
	_SENSITIVITY_INVALID = -EINVAL,
} Sensitivity;
