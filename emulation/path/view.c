/* SPDX-License-Identifier: MIT */
/* Placeholder until the filesystem view lands (issue 4). */
#include "emulation/emu.h"

int sbx_view_placeholder(void);
int sbx_view_placeholder(void)
{
	return 0;
}
