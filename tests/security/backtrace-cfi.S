/* SPDX-License-Identifier: MIT */
/* Functions whose unwind information is hostile (tests/security/backtrace-cfi-bomb.c). Each
 * makes sysinfo(NULL) through an inline syscall and returns its result. */
	.text

/* The CFA rule is a DWARF expression that jumps back onto itself: DW_CFA_def_cfa_expression,
 * 3 bytes, DW_OP_skip -3. An unwinder without a bound loops forever. */
	.globl bt_cfi_loop
	.type bt_cfi_loop, @function
bt_cfi_loop:
	.cfi_startproc
	.cfi_escape 0x0f, 0x03, 0x2f, 0xfd, 0xff
	mov $99, %eax
	xor %edi, %edi
	syscall
	ret
	.cfi_endproc
	.size bt_cfi_loop, .-bt_cfi_loop

/* 524288 DW_CFA_remember_state: an unwinder that keeps a saved state per opcode grows by
 * that much per unwind. */
	.globl bt_cfi_states
	.type bt_cfi_states, @function
bt_cfi_states:
	.cfi_startproc
	.rept 524288
	.cfi_escape 0x0a
	.endr
	mov $99, %eax
	xor %edi, %edi
	syscall
	ret
	.cfi_endproc
	.size bt_cfi_states, .-bt_cfi_states

	.section .note.GNU-stack,"",@progbits
