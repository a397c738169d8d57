/* SPDX-License-Identifier: MIT */
#include "net/landlock-plan.h"

#include <errno.h>
#include <string.h>

static bool has_port(const NetLandlockPlan *p, uint16_t port)
{
	for (size_t i = 0; i < p->n_connect_ports; i++)
		if (p->connect_ports[i] == port)
			return true;
	return false;
}

int net_landlock_plan(const PolicyNetwork *pn, NetMode mode, NetLandlockPlan *ret)
{
	NetLandlockPlan p = {};

	if (!pn || !ret || mode < 0 || mode >= _NET_MODE_MAX)
		return -EINVAL;

	p.scope_abstract_unix = true;
	for (char **s = pn->unix_sockets; s && *s; s++)
		if ((*s)[0] == '@')
			p.scope_abstract_unix = false;

	switch (mode) {
	case NET_MODE_NONE:
		p.restrict_connect = p.restrict_bind = true;
		break;
	case NET_MODE_ALLOWLIST:
		p.restrict_connect = true;
		for (size_t i = 0; i < pn->n_allow && p.restrict_connect; i++) {
			const PolicyNetAllow *e = &pn->allow[i];

			if (e->port_hi < e->port_lo ||
			    (size_t) (e->port_hi - e->port_lo) >= NET_LANDLOCK_MAX_PORTS) {
				p.restrict_connect = false;
				break;
			}
			for (uint32_t port = e->port_lo; port <= e->port_hi; port++) {
				if (has_port(&p, (uint16_t) port))
					continue;
				if (p.n_connect_ports == NET_LANDLOCK_MAX_PORTS) {
					p.restrict_connect = false;
					break;
				}
				p.connect_ports[p.n_connect_ports++] = (uint16_t) port;
			}
		}
		if (!p.restrict_connect)
			p.n_connect_ports = 0;
		break;
	default:
		break;
	}
	*ret = p;
	return 0;
}
