/* SPDX-License-Identifier: MIT */
/*
 * DNS stub, pure parts. Implements the message format of RFC 1035 section 4, EDNS0 (RFC 6891)
 * as far as skipping/noting OPT, and the TCP framing of RFC 1035 4.2.2 / RFC 7766.
 * Compression pointers (RFC 1035 4.1.4) must point before the start of the run of labels that
 * holds them; that makes every name walk terminate, and a hop limit bounds it further.
 */
#include "net/dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "net/allow.h"

#define FLAG_QR		  0x8000
#define FLAG_TC		  0x0200
#define FLAG_RD		  0x0100
#define FLAG_RA		  0x0080
#define NAME_HOPS_MAX	  64
#define REPLY_RECORDS_MAX 512

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t) (p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) (v >> 8);
	p[1] = (uint8_t) v;
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t) (c - 'A' + 'a') : c;
}

/*
 * Reads the name at *pos into out in uncompressed wire form (case kept), at most
 * NET_DNS_WIRE_NAME_MAX bytes with the root label. *pos moves past the name where it is
 * written (past the first pointer, if any).
 */
static int read_name(const uint8_t *msg, size_t len, size_t *pos, uint8_t *out, size_t *ret_len)
{
	size_t p = *pos, run_start = *pos, o = 0, end = 0;
	unsigned hops = 0;
	bool jumped = false;

	for (;;) {
		uint8_t c;

		if (p >= len)
			return -EBADMSG;
		c = msg[p];
		if (c == 0) {
			out[o++] = 0;
			if (!jumped)
				end = p + 1;
			break;
		}
		if ((c & 0xc0) == 0xc0) {
			size_t target;

			if (p + 1 >= len)
				return -EBADMSG;
			target = (size_t) (c & 0x3f) << 8 | msg[p + 1];
			/* Strictly before this run: run starts only decrease, so this ends. */
			if (target >= run_start || ++hops > NAME_HOPS_MAX)
				return -EBADMSG;
			if (!jumped) {
				end = p + 2;
				jumped = true;
			}
			p = run_start = target;
			continue;
		}
		if (c & 0xc0) /* 0x40 and 0x80: extended label types, obsolete (RFC 6891 5) */
			return -EBADMSG;
		/* the label, and room left for the root label after it */
		if (p + 1 + c > len || o + 1 + c + 1 > NET_DNS_WIRE_NAME_MAX)
			return -EBADMSG;
		memcpy(out + o, msg + p, 1 + (size_t) c);
		o += 1 + c;
		p += 1 + c;
	}
	*pos = end;
	*ret_len = o;
	return 0;
}

static bool wire_name_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

/* Wire name to "a.example.com" lower-cased; false if any byte is not a host-name byte. */
static bool wire_to_name(const uint8_t *wire, size_t wire_len, char *out, size_t size)
{
	size_t i = 0, o = 0;

	while (i < wire_len && wire[i] != 0) {
		uint8_t n = wire[i++];

		if (o > 0) {
			if (o + 1 >= size)
				return false;
			out[o++] = '.';
		}
		for (uint8_t k = 0; k < n; k++, i++) {
			uint8_t c = lower(wire[i]);

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			      c == '_'))
				return false;
			if (o + 1 >= size)
				return false;
			out[o++] = (char) c;
		}
	}
	if (o == 0)
		return false;
	out[o] = '\0';
	return true;
}

/* Skips one resource record at *pos (name, type, class, ttl, rdata), returning its fields. */
typedef struct Record {
	uint8_t owner[NET_DNS_WIRE_NAME_MAX];
	size_t owner_len;
	uint16_t type, class;
	uint32_t ttl;
	size_t rdata, rdlength; /* offset of the rdata in the message */
} Record;

static int read_record(const uint8_t *msg, size_t len, size_t *pos, Record *r)
{
	size_t p = *pos;
	int k;

	k = read_name(msg, len, &p, r->owner, &r->owner_len);
	if (k < 0)
		return k;
	if (len - p < 10)
		return -EBADMSG;
	r->type = get16(msg + p);
	r->class = get16(msg + p + 2);
	r->ttl = get32(msg + p + 4);
	r->rdlength = get16(msg + p + 8);
	p += 10;
	if (len - p < r->rdlength)
		return -EBADMSG;
	r->rdata = p;
	*pos = p + r->rdlength;
	return 0;
}

/* Header fields and the one question; *pos ends after the question. */
static int read_question(const uint8_t *msg, size_t len, size_t *pos, NetDnsQuery *q)
{
	size_t p = NET_DNS_HEADER_SIZE;
	int k;

	if (len < NET_DNS_HEADER_SIZE)
		return -EBADMSG;
	q->id = get16(msg);
	q->flags = get16(msg + 2);
	q->opcode = (q->flags >> 11) & 0xf;
	if (get16(msg + 4) != 1)
		return -EBADMSG;
	k = read_name(msg, len, &p, q->wire, &q->wire_len);
	if (k < 0)
		return k;
	if (len - p < 4)
		return -EBADMSG;
	q->qtype = get16(msg + p);
	q->qclass = get16(msg + p + 2);
	*pos = p + 4;
	q->name_valid = wire_to_name(q->wire, q->wire_len, q->name, sizeof(q->name));
	if (!q->name_valid)
		q->name[0] = '\0';
	return 0;
}

int net_dns_parse_query(const uint8_t *msg, size_t len, NetDnsQuery *ret)
{
	NetDnsQuery q = {};
	unsigned arcount;
	size_t p;
	int k;

	if (!msg || !ret)
		return -EINVAL;
	if (len < NET_DNS_HEADER_SIZE || len > NET_DNS_MAX_MESSAGE)
		return -EBADMSG;
	if (get16(msg + 2) & FLAG_QR)
		return -EBADMSG;
	if (get16(msg + 6) != 0 || get16(msg + 8) != 0)
		return -EBADMSG;
	k = read_question(msg, len, &p, &q);
	if (k < 0)
		return k;

	arcount = get16(msg + 10);
	for (unsigned i = 0; i < arcount; i++) {
		Record r;

		k = read_record(msg, len, &p, &r);
		if (k < 0)
			return k;
		if (r.type == NET_DNS_TYPE_OPT) {
			/* RFC 6891 6.1.1: one OPT, owned by the root. */
			if (q.edns || r.owner_len != 1)
				return -EBADMSG;
			q.edns = true;
			q.edns_udp_size = r.class;
		}
	}
	*ret = q;
	return 0;
}

/*
 * The query types forwarded in allowlist mode: what programs ask for a host name. The type is
 * chosen by the client and reaches the upstream, so a free 16-bit field would be 16 bits per
 * query of the name's channel; this list leaves about 4. Others get an empty NOERROR answer
 * (no data of that type), as a resolver answers a type the name has no record of.
 */
static bool qtype_forwarded(uint16_t t)
{
	static const uint16_t types[] = {
		1,   /* A */
		2,   /* NS */
		5,   /* CNAME */
		6,   /* SOA */
		12,  /* PTR */
		15,  /* MX */
		16,  /* TXT */
		28,  /* AAAA */
		33,  /* SRV */
		64,  /* SVCB */
		65,  /* HTTPS */
		257, /* CAA */
	};

	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (types[i] == t)
			return true;
	return false;
}

int net_dns_decide(const PolicyNetwork *pn, NetMode mode, const NetDnsQuery *q, int *ret_rcode)
{
	if (!pn || !q || !ret_rcode)
		return -EINVAL;
	if (q->opcode != 0) {
		*ret_rcode = NET_DNS_RCODE_NOTIMP;
		return 0;
	}
	if (q->qclass != NET_DNS_CLASS_IN || mode == NET_MODE_NONE) {
		*ret_rcode = NET_DNS_RCODE_REFUSED;
		return 0;
	}
	if (mode == NET_MODE_FULL)
		return 1;
	/* An allowed name is forwarded for the usual query types (qtype_forwarded()); only A and
	 * AAAA answers unlock addresses. */
	/* unlisted = "ask" (in the policy's own mode, not after a ratchet drop): an unlisted name
	 * is answered too — its addresses are learned under it, and a connect to them is held
	 * for a decision that shows the name. The lookup itself reaches the upstream unasked. */
	if (q->name_valid &&
	    ((mode == NET_MODE_ALLOWLIST && net_name_allowed(pn, q->name)) ||
	     (pn->ask_unlisted && mode == pn->mode &&
	      (mode == NET_MODE_ALLOWLIST || mode == NET_MODE_LOOPBACK)))) {
		if (qtype_forwarded(q->qtype))
			return 1;
		*ret_rcode = NET_DNS_RCODE_NOERROR;
		return 0;
	}
	*ret_rcode = NET_DNS_RCODE_NXDOMAIN;
	return 0;
}

static int build(uint16_t id, uint16_t flags, const NetDnsQuery *q, uint8_t *buf, size_t size,
		 size_t *ret_len)
{
	size_t need = NET_DNS_HEADER_SIZE + (q ? q->wire_len + 4 : 0);

	if (size < need)
		return -ENOBUFS;
	memset(buf, 0, NET_DNS_HEADER_SIZE);
	put16(buf, id);
	put16(buf + 2, flags);
	put16(buf + 4, q ? 1 : 0);
	if (q) {
		memcpy(buf + NET_DNS_HEADER_SIZE, q->wire, q->wire_len);
		put16(buf + NET_DNS_HEADER_SIZE + q->wire_len, q->qtype);
		put16(buf + NET_DNS_HEADER_SIZE + q->wire_len + 2, q->qclass);
	}
	*ret_len = need;
	return 0;
}

int net_dns_build_reply(const NetDnsQuery *q, int rcode, uint8_t *buf, size_t size, size_t *ret_len)
{
	uint16_t flags;

	if (!q || !buf || !ret_len || rcode < 0 || rcode > 15 || q->wire_len == 0)
		return -EINVAL;
	flags = FLAG_QR | (uint16_t) ((q->opcode & 0xf) << 11) | (q->flags & FLAG_RD) | FLAG_RA |
		(uint16_t) rcode;
	return build(q->id, flags, q, buf, size, ret_len);
}

int net_dns_build_query(const NetDnsQuery *q, uint16_t id, uint8_t *buf, size_t size,
			size_t *ret_len)
{
	NetDnsQuery clean;

	if (!q || !buf || !ret_len || q->wire_len == 0 || q->wire_len > NET_DNS_WIRE_NAME_MAX)
		return -EINVAL;
	/* Only what the question means: a name whose letters' case carries no bits (the
	 * "0x20" trick would give a bit per letter), its type and class; RD, nothing else. */
	clean = (NetDnsQuery){.qtype = q->qtype, .qclass = q->qclass, .wire_len = q->wire_len};
	for (size_t i = 0; i < q->wire_len; i++)
		clean.wire[i] = lower(q->wire[i]);
	return build(id, FLAG_RD, &clean, buf, size, ret_len);
}

size_t net_dns_udp_limit(const NetDnsQuery *q)
{
	if (!q || !q->edns || q->edns_udp_size <= 512)
		return 512;
	return MIN((size_t) q->edns_udp_size, (size_t) NET_DNS_UDP_MAX);
}

int net_dns_build_truncated(const NetDnsQuery *q, uint8_t *buf, size_t size, size_t *ret_len)
{
	int k;

	k = net_dns_build_reply(q, NET_DNS_RCODE_NOERROR, buf, size, ret_len);
	if (k < 0)
		return k;
	put16(buf + 2, get16(buf + 2) | FLAG_TC);
	return 0;
}

int net_dns_build_formerr(const uint8_t *msg, size_t len, uint8_t *buf, size_t size,
			  size_t *ret_len)
{
	uint16_t in, flags;

	if (!msg || !buf || !ret_len)
		return -EINVAL;
	if (len < NET_DNS_HEADER_SIZE)
		return -EBADMSG;
	in = get16(msg + 2);
	if (in & FLAG_QR) /* never answer a reply: no loops between two stubs */
		return -EBADMSG;
	flags = FLAG_QR | (in & 0x7800) | (in & FLAG_RD) | FLAG_RA | NET_DNS_RCODE_FORMERR;
	return build(get16(msg), flags, NULL, buf, size, ret_len);
}

bool net_dns_truncated(const uint8_t *msg, size_t len)
{
	return msg && len >= NET_DNS_HEADER_SIZE && (get16(msg + 2) & FLAG_TC);
}

/* The reply's question equals q's (ID, QR, name case-insensitively, type, class). */
static int check_reply(const uint8_t *msg, size_t len, const NetDnsQuery *q, size_t *ret_pos)
{
	NetDnsQuery r = {};
	int k;

	if (len < NET_DNS_HEADER_SIZE || len > NET_DNS_MAX_MESSAGE)
		return -EBADMSG;
	if (!(get16(msg + 2) & FLAG_QR) || get16(msg) != q->id)
		return -EBADMSG;
	k = read_question(msg, len, ret_pos, &r);
	if (k < 0)
		return k;
	if (r.qtype != q->qtype || r.qclass != q->qclass ||
	    !wire_name_equal(r.wire, r.wire_len, q->wire, q->wire_len))
		return -EBADMSG;
	return 0;
}

int net_dns_parse_reply(const uint8_t *msg, size_t len, const NetDnsQuery *q, NetDnsAddr *addrs,
			size_t max, size_t *ret_n, int *ret_rcode)
{
	uint8_t current[NET_DNS_WIRE_NAME_MAX];
	size_t start, current_len, n = 0;
	unsigned ancount;
	uint32_t chain_ttl = UINT32_MAX;
	int k;

	if (!msg || !q || (!addrs && max > 0) || !ret_n || !ret_rcode)
		return -EINVAL;
	k = check_reply(msg, len, q, &start);
	if (k < 0)
		return k;
	ancount = get16(msg + 6);
	if (ancount > REPLY_RECORDS_MAX)
		return -EBADMSG;

	/* Validate the whole answer section once, so the passes below cannot fail half way. */
	{
		size_t p = start;
		Record r;

		for (unsigned i = 0; i < ancount; i++) {
			k = read_record(msg, len, &p, &r);
			if (k < 0)
				return k;
		}
	}

	memcpy(current, q->wire, q->wire_len);
	current_len = q->wire_len;
	for (unsigned hop = 0; hop <= NET_DNS_CNAME_HOPS; hop++) {
		uint8_t next[NET_DNS_WIRE_NAME_MAX];
		size_t next_len = 0, p = start;
		uint32_t next_ttl = 0;
		bool have_next = false;
		Record r;

		for (unsigned i = 0; i < ancount; i++) {
			(void) read_record(msg, len, &p, &r);
			if (r.class != NET_DNS_CLASS_IN ||
			    !wire_name_equal(r.owner, r.owner_len, current, current_len))
				continue;
			if ((r.type == NET_DNS_TYPE_A && r.rdlength == 4) ||
			    (r.type == NET_DNS_TYPE_AAAA && r.rdlength == 16)) {
				if (n < max) {
					addrs[n] = (NetDnsAddr){
						.family = r.type == NET_DNS_TYPE_A ? AF_INET
										   : AF_INET6,
						.ttl = MIN(r.ttl, chain_ttl),
					};
					memcpy(addrs[n].addr, msg + r.rdata, r.rdlength);
					n++;
				}
			} else if (r.type == NET_DNS_TYPE_CNAME && !have_next) {
				size_t rp = r.rdata;

				/* The target must lie inside the rdata it came from. */
				if (read_name(msg, r.rdata + r.rdlength, &rp, next, &next_len) <
					    0 ||
				    rp != r.rdata + r.rdlength)
					return -EBADMSG;
				next_ttl = r.ttl;
				have_next = true;
			}
		}
		if (!have_next)
			break;
		memcpy(current, next, next_len);
		current_len = next_len;
		chain_ttl = MIN(chain_ttl, next_ttl);
	}

	*ret_n = n;
	*ret_rcode = get16(msg + 2) & 0xf;
	return 0;
}

int net_dns_tcp_frame(const uint8_t *msg, size_t len, uint8_t *out, size_t size, size_t *ret_len)
{
	if (!msg || !out || !ret_len)
		return -EINVAL;
	if (len > NET_DNS_MAX_MESSAGE)
		return -EMSGSIZE;
	if (size < len + 2)
		return -ENOBUFS;
	memmove(out + 2, msg, len);
	put16(out, (uint16_t) len);
	*ret_len = len + 2;
	return 0;
}

int net_dns_tcp_next(const uint8_t *buf, size_t len, size_t *ret_msg_len)
{
	size_t n;

	if (!buf || !ret_msg_len)
		return -EINVAL;
	if (len < 2)
		return 0;
	n = get16(buf);
	if (n < NET_DNS_HEADER_SIZE)
		return -EBADMSG;
	if (len - 2 < n)
		return 0;
	*ret_msg_len = n;
	return 1;
}

int net_dns_parse_server(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *port_s = NULL, *h = s;
	size_t hl;
	unsigned long port = 53;
	struct sockaddr_storage ss = {};

	if (!s || !ret || !ret_len)
		return -EINVAL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close)
			return -EINVAL;
		h = s + 1;
		hl = (size_t) (close - h);
		if (close[1] == ':')
			port_s = close + 2;
		else if (close[1] != '\0')
			return -EINVAL;
	} else {
		const char *colon = strchr(s, ':');

		/* One colon: IPv4 with a port; more: a bare IPv6 address. */
		if (colon && !strchr(colon + 1, ':')) {
			hl = (size_t) (colon - s);
			port_s = colon + 1;
		} else
			hl = strlen(s);
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (port_s) {
		char *end;

		if (*port_s < '0' || *port_s > '9')
			return -EINVAL;
		errno = 0;
		port = strtoul(port_s, &end, 10);
		if (errno != 0 || *end != '\0' || port == 0 || port > 65535)
			return -EINVAL;
	}

	if (!strchr(host, ':')) {
		struct sockaddr_in *in = (struct sockaddr_in *) &ss;

		if (s[0] == '[' || inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return -EINVAL;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t) port);
		*ret_len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;

		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return -EINVAL;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t) port);
		*ret_len = sizeof(*in6);
	}
	*ret = ss;
	return 0;
}

static bool resolv_addr(const char *p, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in *in = (struct sockaddr_in *) &ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;

	if (inet_pton(AF_INET, p, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(53);
		*ret_len = sizeof(*in);
	} else if (inet_pton(AF_INET6, p, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(53);
		*ret_len = sizeof(*in6);
	} else
		return false;
	*ret = ss;
	return true;
}

int net_dns_parse_resolv_conf(const char *text, struct sockaddr_storage *ret, socklen_t *ret_lens,
			      size_t max, size_t *ret_n)
{
	size_t n = 0;

	if (!text || !ret || !ret_lens || !ret_n)
		return -EINVAL;
	for (const char *line = text; *line && n < max;) {
		const char *eol = strchrnul(line, '\n');
		char buf[128], *p, *end;
		size_t l = (size_t) (eol - line);

		if (l < sizeof(buf)) {
			memcpy(buf, line, l);
			buf[l] = '\0';
			p = buf;
			if (strncmp(p, "nameserver", 10) == 0 && (p[10] == ' ' || p[10] == '\t')) {
				p += 10;
				p += strspn(p, " \t");
				end = p + strcspn(p, " \t#;%");
				*end = '\0';
				/* resolv.conf has bare addresses, always port 53. */
				if (resolv_addr(p, &ret[n], &ret_lens[n]))
					n++;
			}
		}
		line = *eol ? eol + 1 : eol;
	}
	*ret_n = n;
	return 0;
}

/* ---- Exchange with an upstream server ---- */

static uint16_t random_id(void)
{
	uint16_t id;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != sizeof(id))
		id = (uint16_t) (now_monotonic_ns() ^ (uint64_t) getpid());
	return id;
}

static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now = now_monotonic_ns();
		struct pollfd pfd = {.fd = fd, .events = events};
		int r;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		r = poll(&pfd, 1,
			 (int) MIN((deadline_ns - now) / 1000000 + 1, (uint64_t) INT32_MAX));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r > 0)
			return 0;
	}
}

static int exchange_udp(const struct sockaddr *up, socklen_t up_len, const uint8_t *wire,
			size_t wire_len, const NetDnsQuery *q, uint64_t deadline, uint8_t *buf,
			size_t size, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	int k;

	fd = socket(up->sa_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Connected: the kernel drops datagrams from any other source. */
	if (connect(fd, up, up_len) < 0)
		return -errno;
	if (send(fd, wire, wire_len, MSG_NOSIGNAL) < 0)
		return -errno;
	for (;;) {
		ssize_t n;
		size_t pos;

		k = wait_fd(fd, POLLIN, deadline);
		if (k < 0)
			return k;
		n = recv(fd, buf, size, MSG_TRUNC);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if ((size_t) n > size)
			return -ENOBUFS;
		if (check_reply(buf, (size_t) n, q, &pos) < 0)
			continue; /* stray or spoofed: keep waiting */
		*ret_len = (size_t) n;
		return 0;
	}
}

static int read_exact(int fd, uint8_t *buf, size_t n, uint64_t deadline)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;
		int k = wait_fd(fd, POLLIN, deadline);

		if (k < 0)
			return k;
		r = recv(fd, buf + got, n - got, 0);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		got += (size_t) r;
	}
	return 0;
}

static int exchange_tcp(const struct sockaddr *up, socklen_t up_len, const uint8_t *wire,
			size_t wire_len, const NetDnsQuery *q, uint64_t deadline, uint8_t *buf,
			size_t size, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ uint8_t *framed = NULL;
	uint8_t lenbuf[2];
	size_t flen, mlen, pos;
	int k;

	framed = malloc(wire_len + 2);
	if (!framed)
		return -ENOMEM;
	k = net_dns_tcp_frame(wire, wire_len, framed, wire_len + 2, &flen);
	if (k < 0)
		return k;
	fd = socket(up->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, up, up_len) < 0) {
		int so_error = 0;
		socklen_t sl = sizeof(so_error);

		if (errno != EINPROGRESS)
			return -errno;
		k = wait_fd(fd, POLLOUT, deadline);
		if (k < 0)
			return k;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &sl) < 0)
			return -errno;
		if (so_error)
			return -so_error;
	}
	for (size_t sent = 0; sent < flen;) {
		ssize_t r;

		k = wait_fd(fd, POLLOUT, deadline);
		if (k < 0)
			return k;
		r = send(fd, framed + sent, flen - sent, MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		sent += (size_t) r;
	}
	k = read_exact(fd, lenbuf, 2, deadline);
	if (k < 0)
		return k;
	mlen = get16(lenbuf);
	if (mlen > size)
		return -ENOBUFS;
	k = read_exact(fd, buf, mlen, deadline);
	if (k < 0)
		return k;
	k = check_reply(buf, mlen, q, &pos);
	if (k < 0)
		return k;
	*ret_len = mlen;
	return 0;
}

/*
 * The upstream's reply made into the reply to the client's own query: its ID, its RD bit, and
 * its question name as it wrote it (the upstream saw the name in lower case; check_reply()
 * found the two equal but for case). Names of records that point at the question follow.
 */
static void map_reply_back(const NetDnsQuery *client, uint8_t *buf, size_t len)
{
	uint16_t flags = (uint16_t) ((get16(buf + 2) & ~FLAG_RD) | (client->flags & FLAG_RD));

	put16(buf, client->id);
	put16(buf + 2, flags);
	if (len >= NET_DNS_HEADER_SIZE + client->wire_len &&
	    wire_name_equal(buf + NET_DNS_HEADER_SIZE, client->wire_len, client->wire,
			    client->wire_len))
		memcpy(buf + NET_DNS_HEADER_SIZE, client->wire, client->wire_len);
}

int net_dns_exchange(const struct sockaddr *upstream, socklen_t upstream_len, const uint8_t *query,
		     size_t query_len, int timeout_ms, uint8_t *buf, size_t size, size_t *ret_len)
{
	uint8_t wire[NET_DNS_HEADER_SIZE + NET_DNS_WIRE_NAME_MAX + 4];
	NetDnsQuery client, q;
	uint64_t deadline;
	size_t wire_len = 0, n = 0;
	int k;

	if (!upstream || !query || !buf || !ret_len || timeout_ms < 0 ||
	    (upstream->sa_family != AF_INET && upstream->sa_family != AF_INET6))
		return -EINVAL;
	k = net_dns_parse_query(query, query_len, &client);
	if (k < 0)
		return k;
	/*
	 * Never the client's bytes: a query of our own from the parsed question, with a fresh
	 * random ID (so the child cannot pick one that eases spoofing, nor send 16 bits in it),
	 * QDCOUNT 1, no additional records (EDNS0 options, extra records), nothing after the
	 * question. Whatever the client put anywhere else stays here.
	 */
	q = client;
	q.id = random_id();
	k = net_dns_build_query(&q, q.id, wire, sizeof(wire), &wire_len);
	if (k < 0)
		return k;
	q.edns = false;

	deadline = now_monotonic_ns() + (uint64_t) timeout_ms * 1000000ULL;
	k = exchange_udp(upstream, upstream_len, wire, wire_len, &q, deadline, buf, size, &n);
	if (k >= 0 && net_dns_truncated(buf, n))
		k = exchange_tcp(upstream, upstream_len, wire, wire_len, &q, deadline, buf, size,
				 &n);
	if (k < 0)
		return k;
	map_reply_back(&client, buf, n);
	*ret_len = n;
	return 0;
}
