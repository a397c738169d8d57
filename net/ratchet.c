/* SPDX-License-Identifier: MIT */
#include "net/ratchet.h"

#include <errno.h>

/* Modes are ordered by what they allow: none < loopback < allowlist < full. */

int net_ratchet_init(NetRatchet *r, NetMode initial)
{
	int r_;

	if (initial < 0 || initial >= _NET_MODE_MAX)
		return -EINVAL;
	*r = (NetRatchet){.mode = initial, .max = SENSITIVITY_NONE, .cause = SENSITIVITY_NONE};
	r_ = pthread_mutex_init(&r->lock, NULL);
	return -r_;
}

void net_ratchet_done(NetRatchet *r)
{
	(void) pthread_mutex_destroy(&r->lock);
}

NetMode net_ratchet_mode(NetRatchet *r)
{
	NetMode m;

	(void) pthread_mutex_lock(&r->lock);
	m = r->mode;
	(void) pthread_mutex_unlock(&r->lock);
	return m;
}

Sensitivity net_ratchet_max(NetRatchet *r)
{
	Sensitivity s;

	(void) pthread_mutex_lock(&r->lock);
	s = r->max;
	(void) pthread_mutex_unlock(&r->lock);
	return s;
}

int net_ratchet_target(const PolicyNetwork *pn, Sensitivity level)
{
	int target = -ENOENT;

	if (level < 0 || level >= _SENSITIVITY_MAX)
		return -EINVAL;
	/* A secret file is at least as sensitive as a confidential one: when only
	 * confidential is mapped, secret drops as far. */
	for (Sensitivity l = SENSITIVITY_INTERNAL; l <= level; l++) {
		NetMode m = pn->ratchet[l];

		if (!pn->has_ratchet[l] || m < 0 || m >= _NET_MODE_MAX)
			continue;
		/* an allowlist without entries reaches nothing: it is none (the policy loader
		 * writes it so; this holds for a PolicyNetwork built by hand too) */
		if (m == NET_MODE_ALLOWLIST && pn->n_allow == 0)
			m = NET_MODE_NONE;
		if (target < 0 || (int) m < target)
			target = (int) m;
	}
	return target;
}

int net_ratchet_open(NetRatchet *r, const PolicyNetwork *pn, Sensitivity level, NetMode *ret_old,
		     NetMode *ret_new)
{
	int target, dropped = 0;
	NetMode old;

	if (level < 0 || level >= _SENSITIVITY_MAX)
		return -EINVAL;
	target = net_ratchet_target(pn, level);

	(void) pthread_mutex_lock(&r->lock);
	if (level > r->max)
		r->max = level;
	old = r->mode;
	if (target >= 0 && target < (int) r->mode) {
		r->mode = (NetMode) target;
		r->cause = level;
		dropped = 1;
	}
	(void) pthread_mutex_unlock(&r->lock);

	if (dropped) {
		if (ret_old)
			*ret_old = old;
		if (ret_new)
			*ret_new = (NetMode) target;
	}
	return dropped;
}
