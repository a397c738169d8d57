/* SPDX-License-Identifier: MIT */
/*
 * Loading policies: variables, extends merging, overrides, validation messages with their
 * positions, and the writer round trip. Files are written into a scratch directory.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/internal.h"
#include "policy/policy.h"
#include "tests/unit/tap.h"

static char scratch[PATH_MAX];
static char workspace[PATH_MAX + 16];
static PolicyVars vars;

static void write_file(const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	f = fopen(path, "we");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/* Loads scratch/name with overrides; returns the error code. */
static int load(const char *name, char **overrides, Policy **ret, PolicyError *err)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	return policy_load(path, &vars, overrides, ret, err);
}

static char *to_toml(const Policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	policy_write_toml(p, f);
	fclose(f);
	return buf;
}

TEST(variables)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	PolicyError err;

	write_file("vars.toml", "[[mount]]\n"
				"path = \"/workspace\"\n"
				"source = \"${WORKSPACE}\"\n"
				"mode = \"rw\"\n"
				"[[mount]]\n"
				"path = \"/home\"\n"
				"source = \"${HOME}/./ws/../ws//\"\n"
				"[[rule]]\n"
				"path = \"/workspace/**/secret-$${x}\"\n"
				"access = \"hide\"\n"
				"[audit]\n"
				"log = \"${RUNTIME_DIR}/audit.jsonl\"\n"
				"[process]\n"
				"cwd = \"/workspace/./sub//\"\n");
	ASSERT_EQ(load("vars.toml", NULL, &p, &err), 0);
	ASSERT_EQ(p->n_mounts, 2);
	EXPECT_STREQ(p->mounts[0].source, workspace);
	EXPECT_EQ(p->mounts[0].mode, MOUNT_RW);
	EXPECT_TRUE(strncmp(p->mounts[1].source, scratch, strlen(scratch)) == 0 &&
		    streq(p->mounts[1].source + strlen(scratch), "/ws"));
	EXPECT_EQ(p->mounts[1].mode, MOUNT_RO);
	EXPECT_STREQ(p->rules[0].glob, "/workspace/**/secret-${x}");
	EXPECT_STREQ(p->process.cwd, "/workspace/sub");
	EXPECT_TRUE(p->audit.log && strncmp(p->audit.log, scratch, strlen(scratch)) == 0);
	EXPECT_STREQ(p->name, "vars");
	EXPECT_TRUE(p->uses_workspace);
}

/* The command line defaults ${WORKSPACE} to the current directory and judges it only when
 * the policy uses it (issue 21): in a file, in an extended file, or in an override. */
TEST(uses_workspace)
{
	Policy *p = NULL;
	PolicyError err;
	char *ov[] = {(char *) "mount=[{path = \"/w\", source = \"${WORKSPACE}\"}]", NULL};

	write_file("no-ws-used.toml", "[[mount]]\npath = \"/usr\"\n");
	ASSERT_EQ(load("no-ws-used.toml", NULL, &p, &err), 0);
	EXPECT_FALSE(p->uses_workspace);
	p = policy_free(p);

	write_file("ws-base.toml", "[[mount]]\npath = \"/w\"\nsource = \"${WORKSPACE}\"\n");
	write_file("ws-child.toml", "extends = \"ws-base.toml\"\n[[mount]]\npath = \"/usr\"\n");
	ASSERT_EQ(load("ws-child.toml", NULL, &p, &err), 0);
	EXPECT_TRUE(p->uses_workspace);
	p = policy_free(p);

	if (load("no-ws-used.toml", ov, &p, &err) == 0) {
		EXPECT_TRUE(p->uses_workspace);
		p = policy_free(p);
	} else {
		printf("# mounts cannot be overridden with -s: %s\n", err.message);
	}
}

TEST(variable_errors)
{
	Policy *p = NULL;
	PolicyError err;
	PolicyVars saved = vars;

	write_file("unknown-var.toml", "[process]\n"
				       "tty = true\n"
				       "[[mount]]\n"
				       "path = \"/w\"\n"
				       "source = \"${WORKSPCE}\"\n");
	EXPECT_EQ(load("unknown-var.toml", NULL, &p, &err), -EINVAL);
	EXPECT_EQ(err.line, 5);
	EXPECT_EQ(err.column, 10);
	EXPECT_STREQ(err.key, "mount[1].source");
	EXPECT_TRUE(strstr(err.message, "did you mean '${WORKSPACE}'") != NULL);

	vars.workspace = NULL;
	write_file("no-ws.toml", "[[mount]]\npath = \"/w\"\nsource = \"${WORKSPACE}\"\n");
	EXPECT_EQ(load("no-ws.toml", NULL, &p, &err), -EINVAL);
	EXPECT_TRUE(strstr(err.message, "-w DIR") != NULL);
	EXPECT_EQ(err.line, 3);
	vars = saved;
	EXPECT_TRUE(p == NULL);
}

TEST(extends_merging)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	PolicyError err;

	ASSERT_EQ(mkdir("sub", 0755) < 0 && errno != EEXIST, 0);
	write_file("base.toml",
		   "[sandbox]\nname = \"base\"\n"
		   "[[mount]]\npath = \"/usr\"\nmode = \"ro\"\n"
		   "[[mount]]\npath = \"/data\"\nsource = \"${WORKSPACE}\"\nmode = \"ro\"\n"
		   "[[rule]]\npath = \"/data/*.key\"\naccess = \"hide\"\n"
		   "[network]\nmode = \"loopback\"\ndns = [\"1.1.1.1\"]\n"
		   "[limits]\nmemory = \"512MiB\"\nwall_time = 30\n"
		   "[syscalls]\ndeny = [\"uname\"]\n"
		   "[process]\nenv = { keep = [\"PATH\"], set = { A = \"1\", B = \"2\" } }\n");
	write_file("sub/child.toml", "extends = \"../base.toml\"\n"
				     "[[mount]]\npath = \"/data\"\nsource = \"${WORKSPACE}\"\n"
				     "mode = \"rw\"\n"
				     "[[mount]]\npath = \"/tmp\"\nmode = \"tmp\"\n"
				     "[[rule]]\npath = \"/data/**\"\nlevel = \"secret\"\n"
				     "[limits]\nmemory = \"1GiB\"\n"
				     "[syscalls]\nerrno = \"EACCES\"\nallow = [\"uname\"]\n"
				     "deny = [\"@keyring\", \"sysinfo:ENOSYS\"]\n"
				     "[process]\nenv = { set = { B = \"3\" } }\n");
	ASSERT_EQ(load("sub/child.toml", NULL, &p, &err), 0);
	ASSERT_EQ(p->n_mounts, 3);
	EXPECT_STREQ(p->mounts[0].path, "/usr");
	EXPECT_STREQ(p->mounts[1].path, "/data");
	EXPECT_EQ(p->mounts[1].mode, MOUNT_RW); /* replaced in place */
	EXPECT_STREQ(p->mounts[2].path, "/tmp");
	EXPECT_TRUE(p->mounts[2].source == NULL);
	EXPECT_EQ(p->n_rules, 2);
	EXPECT_EQ(p->network.mode, NET_MODE_LOOPBACK);
	EXPECT_EQ(p->limits.memory, 1ull << 30);
	EXPECT_EQ(p->limits.wall_time_ms, 30000);
	EXPECT_EQ(p->deny_errno, EACCES);
	EXPECT_STREQ(p->name, "child"); /* a base's name does not carry over */
	ASSERT_TRUE(p->extends != NULL);
	EXPECT_STREQ(p->extends[0], "../base.toml");

	const PolicySyscall *s = policy_syscall_find(p, "uname");
	ASSERT_TRUE(s != NULL);
	EXPECT_EQ(s->action, SYSCALL_ACTION_ALLOW);
	s = policy_syscall_find(p, "keyctl");
	ASSERT_TRUE(s != NULL);
	EXPECT_EQ(s->action, SYSCALL_ACTION_DENY);
	EXPECT_EQ(s->error, EACCES);
	s = policy_syscall_find(p, "sysinfo");
	ASSERT_TRUE(s != NULL);
	EXPECT_EQ(s->error, ENOSYS);

	EXPECT_TRUE(strv_contains(p->process.env_keep, "PATH"));
	EXPECT_TRUE(strv_contains(p->process.env_set, "A=1"));
	EXPECT_TRUE(strv_contains(p->process.env_set, "B=3"));
	EXPECT_FALSE(strv_contains(p->process.env_set, "B=2"));

	RuleAccess a;
	Sensitivity lvl;
	policy_rule_lookup(p, "/data/id.key", &a, &lvl);
	EXPECT_EQ(a, RULE_ACCESS_HIDE);
	EXPECT_EQ(lvl, SENSITIVITY_SECRET);
	policy_rule_lookup(p, "/usr/bin/sh", &a, &lvl);
	EXPECT_EQ(a, RULE_ACCESS_UNSET);
	EXPECT_EQ(lvl, SENSITIVITY_NONE);
}

TEST(rule_lookup)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	PolicyError err;
	RuleAccess a;
	Sensitivity lvl;

	write_file("rules.toml", "[[rule]]\npath = \"/w\"\naccess = \"ro\"\n"
				 "[[rule]]\npath = \"/w/out\"\naccess = \"rw\"\n"
				 "[[rule]]\npath = \"/w/out/*.lock\"\naccess = \"deny\"\n"
				 "[[rule]]\npath = \"/w/**/.ssh\"\naccess = \"hide\"\n"
				 "[[rule]]\npath = \"/w/**/.ssh/*.pub\"\naccess = \"rw\"\n"
				 "[[rule]]\npath = \"/w/customers\"\nlevel = \"confidential\"\n"
				 "[[rule]]\npath = \"/w/customers/**/*.key\"\nlevel = \"secret\"\n"
				 "[[rule]]\npath = \"/w/customers/*\"\nlevel = \"internal\"\n");
	ASSERT_EQ(load("rules.toml", NULL, &p, &err), 0);

	/* a rule on a directory covers what is below it; the deepest ro/rw rule wins */
	policy_rule_lookup(p, "/w/src/main.c", &a, &lvl);
	EXPECT_EQ(a, RULE_ACCESS_RO);
	EXPECT_EQ(lvl, SENSITIVITY_NONE);
	policy_rule_lookup(p, "/w/out/a.o", &a, NULL);
	EXPECT_EQ(a, RULE_ACCESS_RW);
	/* deny and hide win over ro/rw, also over a deeper rw */
	policy_rule_lookup(p, "/w/out/x.lock", &a, NULL);
	EXPECT_EQ(a, RULE_ACCESS_DENY);
	policy_rule_lookup(p, "/w/home/.ssh/id.pub", &a, NULL);
	EXPECT_EQ(a, RULE_ACCESS_HIDE);
	policy_rule_lookup(p, "/w/.ssh", &a, NULL);
	EXPECT_EQ(a, RULE_ACCESS_HIDE);
	/* the highest level of all applying rules */
	policy_rule_lookup(p, "/w/customers/acme/id.key", &a, &lvl);
	EXPECT_EQ(lvl, SENSITIVITY_SECRET);
	policy_rule_lookup(p, "/w/customers/acme/list.csv", NULL, &lvl);
	EXPECT_EQ(lvl, SENSITIVITY_CONFIDENTIAL);
	policy_rule_lookup(p, "/w", &a, &lvl);
	EXPECT_EQ(a, RULE_ACCESS_RO);
	EXPECT_EQ(lvl, SENSITIVITY_NONE);
	policy_rule_lookup(p, "/other", &a, &lvl);
	EXPECT_EQ(a, RULE_ACCESS_UNSET);
	policy_rule_lookup(p, "relative", &a, NULL);
	EXPECT_EQ(a, RULE_ACCESS_DENY);
}

/* access = "ask" / "ask-write" (issue 17): one of the ro/rw kind (the deepest wins), below
 * hide and deny; the rule that applies comes back with its ask_timeout */
TEST(rule_lookup_ask)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	const PolicyRule *rule;
	PolicyError err;
	RuleAccess a;

	write_file("ask.toml", "[[rule]]\npath = \"/w\"\naccess = \"ask-write\"\n"
			       "ask_timeout = \"90s\"\n"
			       "[[rule]]\npath = \"/w/tmp\"\naccess = \"rw\"\n"
			       "[[rule]]\npath = \"/w/tmp/keep\"\naccess = \"ask\"\n"
			       "[[rule]]\npath = \"/w/**/*.key\"\naccess = \"deny\"\n");
	ASSERT_EQ(load("ask.toml", NULL, &p, &err), 0);
	policy_rule_lookup_rule(p, "/w/a.txt", &a, NULL, &rule);
	EXPECT_EQ(a, RULE_ACCESS_ASK_WRITE);
	ASSERT_TRUE(rule != NULL);
	EXPECT_EQ(rule->ask_timeout_ms, 90000);
	policy_rule_lookup_rule(p, "/w/tmp/x", &a, NULL, &rule);
	EXPECT_EQ(a, RULE_ACCESS_RW);
	policy_rule_lookup_rule(p, "/w/tmp/keep/x", &a, NULL, &rule);
	EXPECT_EQ(a, RULE_ACCESS_ASK);
	EXPECT_EQ(rule->ask_timeout_ms, 30000);
	policy_rule_lookup_rule(p, "/w/tmp/keep/id.key", &a, NULL, &rule);
	EXPECT_EQ(a, RULE_ACCESS_DENY);
	EXPECT_TRUE(rule == NULL);
}

TEST(extends_cycle_and_missing)
{
	Policy *p = NULL;
	PolicyError err;

	write_file("cycle-a.toml", "extends = \"cycle-b.toml\"\n");
	write_file("cycle-b.toml", "extends = [\"cycle-a.toml\"]\n");
	EXPECT_EQ(load("cycle-a.toml", NULL, &p, &err), -EINVAL);
	EXPECT_TRUE(strstr(err.message, "cycle") != NULL);

	write_file("missing-base.toml", "\n\nextends = \"nope.toml\"\n");
	EXPECT_EQ(load("missing-base.toml", NULL, &p, &err), -ENOENT);
	EXPECT_EQ(err.line, 3);
	EXPECT_STREQ(err.key, "extends");

	EXPECT_EQ(load("does-not-exist.toml", NULL, &p, &err), -ENOENT);
	EXPECT_EQ(policy_load("standrd", &vars, NULL, &p, &err), -ENOENT);
	EXPECT_TRUE(strstr(err.message, "did you mean 'standard'") != NULL);
	EXPECT_TRUE(p == NULL);
}

TEST(overrides)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	Policy *bad = NULL;
	PolicyError err;
	char *ovs[] = {"limits.wall_time=5s",
		       "network.mode=allowlist",
		       "network.allow=[\"10.0.0.0/8:443\", \"*.PyPI.org:443\"]",
		       "tracer.landlock=false",
		       "limits.tasks=7",
		       "sandbox.name=over ride",
		       "limits.memory=unlimited",
		       NULL};
	char *unknown[] = {"limits.wal_time=5s", NULL};
	char *badval[] = {"limits.tasks=lots", NULL};
	char *ext[] = {"extends=standard", NULL};

	write_file("ov.toml", "[limits]\nwall_time = \"30s\"\nmemory = \"1G\"\n");
	ASSERT_EQ(load("ov.toml", ovs, &p, &err), 0);
	EXPECT_EQ(p->limits.wall_time_ms, 5000);
	EXPECT_EQ(p->limits.tasks, 7);
	EXPECT_EQ(p->limits.memory, LIMIT_UNSET);
	EXPECT_EQ(p->network.mode, NET_MODE_ALLOWLIST);
	ASSERT_EQ(p->network.n_allow, 2);
	EXPECT_EQ(p->network.allow[0].kind, NET_ALLOW_CIDR);
	EXPECT_EQ(p->network.allow[0].prefix, 8);
	EXPECT_EQ(p->network.allow[0].port_lo, 443);
	EXPECT_EQ(p->network.allow[1].kind, NET_ALLOW_DOMAIN);
	EXPECT_STREQ(p->network.allow[1].name, "pypi.org");
	EXPECT_EQ(p->landlock, TRI_OFF);
	EXPECT_STREQ(p->name, "over ride");

	EXPECT_EQ(load("ov.toml", unknown, &bad, &err), -EINVAL);
	EXPECT_STREQ(err.file, "-s override");
	EXPECT_STREQ(err.key, "limits.wal_time");
	EXPECT_TRUE(strstr(err.message, "did you mean 'wall_time'") != NULL);
	EXPECT_EQ(load("ov.toml", badval, &bad, &err), -EINVAL);
	EXPECT_TRUE(strstr(err.message, "expected an integer, got a string") != NULL);
	EXPECT_EQ(load("ov.toml", ext, &bad, &err), -EINVAL);
	EXPECT_TRUE(bad == NULL);
}

/* Issue 21: a level on a rule works without a ratchet map. */
TEST(ratchet_defaults)
{
	_cleanup_free_ char *text = NULL;
	Policy *p = NULL;
	PolicyError err;

	/* no allow entries: confidential's allowlist is none */
	write_file("rd-none.toml", "[network]\nmode = \"full\"\n");
	ASSERT_EQ(load("rd-none.toml", NULL, &p, &err), 0);
	EXPECT_FALSE(p->network.has_ratchet[SENSITIVITY_INTERNAL]);
	EXPECT_TRUE(p->network.has_ratchet[SENSITIVITY_CONFIDENTIAL]);
	EXPECT_EQ(p->network.ratchet[SENSITIVITY_CONFIDENTIAL], NET_MODE_NONE);
	EXPECT_TRUE(p->network.has_ratchet[SENSITIVITY_SECRET]);
	EXPECT_EQ(p->network.ratchet[SENSITIVITY_SECRET], NET_MODE_NONE);
	text = to_toml(p);
	ASSERT_TRUE(text != NULL);
	EXPECT_TRUE(strstr(text, "ratchet = { confidential = \"none\", secret = \"none\" }\n") !=
		    NULL);
	p = policy_free(p);

	/* with entries: the allowlist */
	write_file("rd-allow.toml", "[network]\nmode = \"full\"\nallow = [\"10.0.0.0/8:443\"]\n");
	ASSERT_EQ(load("rd-allow.toml", NULL, &p, &err), 0);
	EXPECT_EQ(p->network.ratchet[SENSITIVITY_CONFIDENTIAL], NET_MODE_ALLOWLIST);
	EXPECT_EQ(p->network.ratchet[SENSITIVITY_SECRET], NET_MODE_NONE);
	p = policy_free(p);

	/* a policy's own entries win, level by level; an explicit empty allowlist is none */
	write_file("rd-own.toml",
		   "extends = \"rd-none.toml\"\n[network]\n"
		   "ratchet = { internal = \"allowlist\", secret = \"loopback\" }\n");
	ASSERT_EQ(load("rd-own.toml", NULL, &p, &err), 0);
	EXPECT_TRUE(p->network.has_ratchet[SENSITIVITY_INTERNAL]);
	EXPECT_EQ(p->network.ratchet[SENSITIVITY_INTERNAL], NET_MODE_NONE);
	EXPECT_EQ(p->network.ratchet[SENSITIVITY_CONFIDENTIAL], NET_MODE_NONE);
	EXPECT_EQ(p->network.ratchet[SENSITIVITY_SECRET], NET_MODE_LOOPBACK);
	p = policy_free(p);
}

TEST(network_entries)
{
	PolicyNetAllow a;
	char buf[160];

	ASSERT_TRUE(policy_parse_net_allow("192.0.2.1:80-90", &a, buf, sizeof(buf)) == NULL);
	EXPECT_EQ(a.family, AF_INET);
	EXPECT_EQ(a.prefix, 32);
	EXPECT_EQ(a.port_lo, 80);
	EXPECT_EQ(a.port_hi, 90);
	policy_net_allow_done(&a);
	ASSERT_TRUE(policy_parse_net_allow("[2001:db8::]/32:443", &a, buf, sizeof(buf)) == NULL);
	EXPECT_EQ(a.family, AF_INET6);
	EXPECT_EQ(a.prefix, 32);
	EXPECT_EQ(a.port_lo, 443);
	policy_net_allow_done(&a);
	ASSERT_TRUE(policy_parse_net_allow("2001:db8::/32", &a, buf, sizeof(buf)) == NULL);
	EXPECT_EQ(a.port_lo, 0);
	EXPECT_EQ(a.port_hi, 65535);
	policy_net_allow_done(&a);
	ASSERT_TRUE(policy_parse_net_allow("*.example.org.", &a, buf, sizeof(buf)) == NULL);
	EXPECT_EQ(a.kind, NET_ALLOW_DOMAIN);
	EXPECT_STREQ(a.name, "example.org");
	policy_net_allow_done(&a);
	EXPECT_TRUE(policy_parse_net_allow("example.org..", &a, buf, sizeof(buf)) != NULL);
	ASSERT_TRUE(policy_parse_net_allow("Example.COM:443", &a, buf, sizeof(buf)) == NULL);
	EXPECT_EQ(a.kind, NET_ALLOW_HOST);
	EXPECT_STREQ(a.name, "example.com");
	policy_net_allow_done(&a);

	EXPECT_TRUE(policy_parse_net_allow("10.0.0.0/33", &a, buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_parse_net_allow("10.0.0.1/8", &a, buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_parse_net_allow("10.0.0.300", &a, buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_parse_net_allow("example.com:70000", &a, buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_parse_net_allow("example.com:0", &a, buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_parse_net_allow("example.com:90-80", &a, buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_parse_net_allow("exa mple.com", &a, buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_parse_net_allow("*.:80", &a, buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_check_dns("1.1.1.1", buf, sizeof(buf)) == NULL);
	EXPECT_TRUE(policy_check_dns("[::1]:5353", buf, sizeof(buf)) == NULL);
	EXPECT_TRUE(policy_check_dns("dns.google", buf, sizeof(buf)) != NULL);
	EXPECT_TRUE(policy_check_dns("10.0.0.0/8", buf, sizeof(buf)) != NULL);
}

TEST(errors_point_at_the_key)
{
	static const struct {
		const char *text, *key, *message;
		unsigned line, column;
	} cases[] = {
		{"[limits]\nmemory = true\n", "limits.memory", "expected a size", 2, 10},
		{"[limits]\n\nmemroy = 5\n", "limits.memroy", "did you mean 'memory'", 3, 1},
		{"[network]\nmode = \"lookback\"\n", "network.mode", "did you mean 'loopback'", 2,
		 8},
		{"[network]\nmode = \"allowlist\"\n", "network.mode", "no entries", 2, 8},
		{"[syscalls]\ndeny = [\"unmae\"]\n", "syscalls.deny", "did you mean 'uname'", 2, 9},
		{"[syscalls]\ndeny = [\"uname:EFOO\"]\n", "syscalls.deny", "errno", 2, 9},
		{"[syscalls]\nallow = [\"uname\"]\nkill = [\"uname\"]\n", "syscalls.kill", "twice",
		 3, 9},
		{"[[mount]]\npath = \"tmp\"\nmode = \"tmp\"\n", "mount[1].path", "absolute", 2, 8},
		{"[[mount]]\npath = \"/t\"\nmode = \"tmp\"\n[[mount]]\npath = \"/t/\"\nmode = "
		 "\"tmp\"\n",
		 "mount[2].path", "conflicting mounts", 5, 8},
		{"[process]\ncwd = \"/nowhere\"\n", "process.cwd", "not inside any mount", 2, 7},
		{"[audit]\nbacktrace_depth = 0\n", "audit.backtrace_depth", "between", 2, 19},
		{"[audit]\nevents = [\"file\", \"sycall\"]\n", "audit.events", "'syscall'", 2, 19},
		{"[tracer]\nptrace = \"sometimes\"\n", "tracer.ptrace", "unknown value", 2, 10},
		{"sandbox = 3\n", "sandbox", "expected a table, got an integer", 1, 11},
		{"[[rule]]\npath = \"/a/[x\"\naccess = \"hide\"\n", "rule[1].path", "bad glob", 2,
		 8},
		{"[[rule]]\npath = \"/a\"\n", "rule[1]", "access, a level", 1, 1},
		{"[limits]\ntasks = 2000000\n", "limits.tasks", "absurd", 2, 9},
		{"[limits]\nwall_time = \"8d\"\n", "limits.wall_time", "absurd", 2, 13},
		{"[limits]\nmemory = -5\n", "limits.memory", "negative", 2, 10},
		{"[process]\npty = \"yes\"\n", "process.pty", "expected a bool", 2, 7},
		{"[process]\nptyy = true\n", "process.ptyy", "did you mean 'pty'", 2, 1},
		/* held calls (issue 17) */
		{"[network]\nunlisted = \"maybe\"\n", "network.unlisted", "unknown value 'maybe'",
		 2, 12},
		{"[exec]\nallow = [\"/bin/*\"]\nunlisted = \"asks\"\n", "exec.unlisted",
		 "did you mean 'ask'", 3, 12},
		{"[exec]\nunlisted = \"ask\"\n", "exec.unlisted", "needs exec.allow", 2, 12},
		{"[exec]\nallow = [\"/bin/*\"]\nunlisted = \"ask\"\n[tracer]\nptrace = \"never\"\n",
		 "exec.unlisted", "needs ptrace", 3, 12},
		{"[exec]\nask_timeout = \"2h\"\n", "exec.ask_timeout", "from 1s to 1h", 2, 15},
		{"[exec]\nunlisted = true\n", "exec.unlisted", "expected a string", 2, 12},
		{"[exec]\nask = \"yes\"\n", "exec.ask", "unknown key", 2, 1},
		{"[[rule]]\npath = \"/w\"\naccess = \"asks\"\n", "rule[1].access",
		 "did you mean 'ask'", 3, 10},
		{"[[rule]]\npath = \"/w\"\naccess = \"ro\"\nask_timeout = \"5s\"\n",
		 "rule[1].ask_timeout", "needs access = \"ask\"", 4, 15},
		{"[[rule]]\npath = \"/w\"\naccess = \"ask\"\nask_timeout = 0\n",
		 "rule[1].ask_timeout", "from 1s to 1h", 4, 15},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		Policy *p = NULL;
		PolicyError err;
		int r;

		write_file("case.toml", cases[i].text);
		r = load("case.toml", NULL, &p, &err);
		if (r != -EINVAL || !streq(err.key, cases[i].key) ||
		    !strstr(err.message, cases[i].message) || err.line != cases[i].line ||
		    err.column != cases[i].column)
			TAP_FAIL_(0, "case %zu: r=%d %u:%u key '%s' message '%s'", i, r, err.line,
				  err.column, err.key, err.message);
		policy_free(p);
	}
}

TEST(load_string_and_escaped_messages)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	Policy *bad = NULL;
	PolicyError err;
	static const char text[] = "[[mount]]\npath = \"/w\"\nsource = \"ws\"\nmode = \"rw\"\n";
	static const char evil[] = "[[mount]]\npath = \"a\\nb\\u001b[2J\"\n";

	/* relative paths start at vars.pwd, the scratch directory */
	ASSERT_EQ(policy_load_string(text, strlen(text), "mem.toml", &vars, NULL, &p, &err), 0);
	EXPECT_STREQ(p->path, "mem.toml");
	EXPECT_STREQ(p->name, "mem");
	ASSERT_EQ(p->n_mounts, 1);
	EXPECT_TRUE(strncmp(p->mounts[0].source, scratch, strlen(scratch)) == 0);

	/* what the policy says is quoted in one line of printable text */
	EXPECT_EQ(policy_load_string(evil, strlen(evil), "evil.toml", &vars, NULL, &bad, &err),
		  -EINVAL);
	EXPECT_TRUE(strstr(err.message, "'a\\nb\\x1b[2J'") != NULL);
	for (const char *c = err.message; *c; c++)
		EXPECT_TRUE((unsigned char) *c >= 0x20);
	EXPECT_TRUE(bad == NULL);
}

TEST(write_round_trip)
{
	_cleanup_(policy_freep) Policy *p = NULL, *q = NULL;
	_cleanup_free_ char *a = NULL, *b = NULL;
	PolicyError err;
	char buf[1024];

	write_file(
		"full.toml",
		"[sandbox]\nname = \"full\"\ndescription = \"all \\\"keys\\\" $HOME\"\n"
		"[[mount]]\npath = \"/\"\nsource = \"/usr\"\n"
		"[[mount]]\npath = \"/workspace\"\nsource = \"${WORKSPACE}\"\nmode = \"rw\"\n"
		"[[mount]]\npath = \"/tmp\"\nmode = \"tmp\"\nkeep = true\n"
		"[[rule]]\npath = \"/workspace/**/*.key\"\naccess = \"hide\"\nlevel = \"secret\"\n"
		"[[rule]]\npath = \"/workspace/$$x\"\nlevel = \"internal\"\n"
		"[[rule]]\npath = \"/workspace/out\"\naccess = \"ask-write\"\nask_timeout = "
		"\"2m\"\n"
		"[process]\ncwd = \"/workspace\"\ntty = true\npty = true\n"
		"env = { keep = [\"PATH\", \"LC_*\"], set = { HOME = \"/workspace\" } }\n"
		"[exec]\nallow = [\"/usr/bin/*\", \"/bin/*\"]\ndeny = [\"/usr/bin/sudo\"]\n"
		"unlisted = \"ask\"\nask_timeout = \"45s\"\n"
		"[network]\nmode = \"allowlist\"\n"
		"allow = [\"10.0.0.0/8:443\", \"192.0.2.1:80-90\", \"[2001:db8::]/32:443\", "
		"\"example.com:443\", \"*.pypi.org:443\"]\n"
		"dns = [\"1.1.1.1\", \"[::1]:5353\"]\nunix = [\"/run/app.sock\", \"@abstract\"]\n"
		"ratchet = { internal = \"allowlist\", confidential = \"loopback\", secret = "
		"\"none\" }\n"
		"unshare = false\nconnect_errno = \"EHOSTUNREACH\"\nsocket_errno = \"EPERM\"\n"
		"[limits]\nwall_time = \"1.5s\"\ncpu_time = 30\nmemory = \"512MiB\"\ntasks = 64\n"
		"file_size = \"100MB\"\nopen_files = 256\ndisk = \"1GiB\"\noutput = 1000\n"
		"kill_grace = 0\ncpus = 2\n"
		"[syscalls]\nerrno = \"EPERM\"\nallow = [\"personality\"]\n"
		"deny = [\"@keyring\", \"uname:ENOSYS\"]\nkill = [\"kexec_load\"]\nlog = "
		"[\"getrandom\"]\n"
		"[tracer]\nptrace = \"always\"\nlandlock = true\n"
		"[audit]\nlog = \"audit.jsonl\"\nevents = [\"file\", \"exec\", \"denied\"]\n"
		"backtrace = [\"openat\", \"connect\"]\nbacktrace_depth = 8\n"
		"disassembly = \"denied\"\ntrace = true\n");
	ASSERT_EQ(load("full.toml", NULL, &p, &err), 0);
	a = to_toml(p);
	ASSERT_TRUE(a != NULL);
	write_file("written.toml", a);
	if (load("written.toml", NULL, &q, &err) < 0)
		TAP_FAIL_(1, "written policy does not load: %s\n%s",
			  policy_error_format(&err, buf, sizeof(buf)), a);
	b = to_toml(q);
	ASSERT_TRUE(b != NULL);
	EXPECT_STREQ(a, b);
	EXPECT_EQ(q->n_mounts, 3);
	EXPECT_STREQ(q->rules[1].glob, "/workspace/$x");
	EXPECT_EQ(q->rules[2].access, RULE_ACCESS_ASK_WRITE);
	EXPECT_EQ(q->rules[2].ask_timeout_ms, 120000);
	EXPECT_EQ(q->limits.kill_grace_ms, 0);
	EXPECT_TRUE(q->process.pty);
	EXPECT_EQ(q->limits.wall_time_ms, 1500);
	EXPECT_EQ(q->limits.file_size, 100000000);
	EXPECT_EQ(q->network.unshare_netns, 0);
	EXPECT_EQ(q->audit.events, AUDIT_EVENT_FILE | AUDIT_EVENT_EXEC | AUDIT_EVENT_DENIED);
	EXPECT_EQ(q->audit.backtrace, AUDIT_SELECT_LIST);
	EXPECT_TRUE(policy_exec_allowed(q, "/usr/bin/python3"));
	EXPECT_FALSE(policy_exec_allowed(q, "/usr/bin/sudo"));
	EXPECT_FALSE(policy_exec_allowed(q, "/workspace/a.out"));
	EXPECT_TRUE(q->exec_ask_unlisted);
	EXPECT_EQ(q->exec_ask_timeout_ms, 45000);
	EXPECT_TRUE(policy_exec_askable(q, "/workspace/a.out"));
	EXPECT_FALSE(policy_exec_askable(q, "/usr/bin/sudo"));	  /* deny is never asked */
	EXPECT_FALSE(policy_exec_askable(q, "/usr/bin/python3")); /* allowed: nothing to ask */
}

/* An error names the file and the line (and the key) when formatted. */
TEST(error_names_file_and_line)
{
	Policy *p = NULL;
	PolicyError err;
	char buf[1024];

	write_file("held.toml", "[exec]\nallow = [\"/bin/*\"]\nunlisted = \"sometimes\"\n");
	ASSERT_EQ(load("held.toml", NULL, &p, &err), -EINVAL);
	policy_error_format(&err, buf, sizeof(buf));
	EXPECT_TRUE(strstr(buf, "held.toml:3") != NULL);
	EXPECT_TRUE(strstr(buf, "exec.unlisted") != NULL);
	EXPECT_TRUE(strstr(buf, "one of: deny, ask") != NULL);
	policy_free(p);
}

int main(void)
{
	char ws[PATH_MAX + 8];
	const char *tmp = getenv("TMPDIR");
	int r;

	snprintf(scratch, sizeof(scratch), "%s/test-policy-load-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		perror("mkdtemp");
		return 1;
	}
	if (chdir(scratch) < 0)
		return 1;
	snprintf(ws, sizeof(ws), "%s/ws", scratch);
	if (mkdir(ws, 0755) < 0 || !realpath(ws, workspace))
		return 1;
	vars = (PolicyVars){
		.workspace = workspace, .home = scratch, .pwd = scratch, .runtime_dir = scratch};
	r = tap_run();
	if (r == 0) {
		char cmd[PATH_MAX + 32];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		(void) !system(cmd);
	}
	return r;
}
