/* SPDX-License-Identifier: MIT */
/* Placeholder until the supervisor core lands (issue 3). */
#include "emulation/emu.h"

const EmuEntry *emu_table_placeholder(void);
const EmuEntry *emu_table_placeholder(void)
{
	return NULL;
}
