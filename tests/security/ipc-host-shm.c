/* SPDX-License-Identifier: MIT */
/*
 * Issue 24, item 1: host IPC. Outside the sandbox the test makes a SysV shared-memory segment
 * (with a marker in it), a semaphore set, a message queue and a POSIX message queue, all of
 * its own user, and tells the program their keys, id and name. Inside, the program lists the
 * SysV segments it can see (SHM_STAT_ANY, SHM_STAT, over every index SHM_INFO reports),
 * attaches to the outside segment by id, looks the objects up by key and name, and creates a
 * segment and a POSIX queue of its own that must not outlive the run. Nothing of the host's
 * may be seen or reached; afterwards the test checks from outside that the marker is intact
 * and that nothing created inside is left. Either a private IPC namespace (root, the kernel
 * view) or ENOSYS (a plain user in the emulated view) passes; both are checked to be what
 * the run reports.
 */
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#include "tests/security/fs-escape.h"

#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

#ifndef SHM_STAT_ANY
#define SHM_STAT_ANY 15 /* Linux 4.17 */
#endif

#define MARKER	"HOST-SHM-MARKER-2718"
#define SEG_LEN (1 << 20)

static key_t host_key;
static int host_shmid = -1, host_semid = -1, host_msgid = -1;
static char host_mq[64], inside_mq[64];

static void fs_prepare(const char *ws)
{
	char p[PATH_MAX + 16], text[256];
	struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 16};
	void *m;
	mqd_t q;

	/* a key nobody else uses: derived from the pid and the time */
	host_key = (key_t) (0x5b000000 | ((getpid() & 0xfff) << 12) | (time(NULL) & 0xfff));
	host_shmid = shmget(host_key, SEG_LEN, IPC_CREAT | IPC_EXCL | 0600);
	if (host_shmid < 0) {
		perror("shmget outside");
		exit(1);
	}
	m = shmat(host_shmid, NULL, 0);
	if (m == (void *) -1) {
		perror("shmat outside");
		exit(1);
	}
	strcpy(m, MARKER);
	(void) shmdt(m);
	host_semid = semget(host_key + 2, 1, IPC_CREAT | IPC_EXCL | 0600);
	host_msgid = msgget(host_key + 3, IPC_CREAT | IPC_EXCL | 0600);
	snprintf(host_mq, sizeof(host_mq), "/sbx-host-%d", (int) getpid());
	snprintf(inside_mq, sizeof(inside_mq), "/sbx-inside-%d", (int) getpid());
	q = mq_open(host_mq, O_CREAT | O_EXCL | O_RDWR, 0600, &a);
	if (q == (mqd_t) -1)
		host_mq[0] = 0; /* no POSIX mqueues here: that part is not tested */
	else
		(void) mq_close(q);
	snprintf(p, sizeof(p), "%s/ipc-info", ws);
	snprintf(text, sizeof(text), "%d %d %s %s\n", (int) host_key, host_shmid,
		 host_mq[0] ? host_mq : "-", inside_mq);
	if (fs_write_file(p, text) < 0) {
		perror("writing ipc-info");
		exit(1);
	}
}

static int fs_check(void)
{
	int bad = 0, id;
	char *m;
	mqd_t q;

	m = shmat(host_shmid, NULL, SHM_RDONLY);
	if (m == (void *) -1 || strcmp(m, MARKER) != 0) {
		fprintf(stderr, "ESCAPE: the host segment was changed (or removed)\n");
		bad = 1;
	}
	if (m != (void *) -1)
		(void) shmdt(m);
	id = shmget(host_key + 1, 0, 0);
	if (id >= 0) {
		fprintf(stderr, "ESCAPE: a segment created inside outlived the run\n");
		(void) shmctl(id, IPC_RMID, NULL);
		bad = 1;
	}
	q = mq_open(inside_mq, O_RDONLY);
	if (q != (mqd_t) -1) {
		fprintf(stderr, "ESCAPE: a POSIX queue created inside is on the host\n");
		(void) mq_close(q);
		(void) mq_unlink(inside_mq);
		bad = 1;
	}
	(void) shmctl(host_shmid, IPC_RMID, NULL);
	if (host_semid >= 0)
		(void) semctl(host_semid, 0, IPC_RMID);
	if (host_msgid >= 0)
		(void) msgctl(host_msgid, IPC_RMID, NULL);
	if (host_mq[0])
		(void) mq_unlink(host_mq);
	return bad;
}

static int attack(void)
{
	char buf[256], hmq[64], imq[64], m[160];
	struct shm_info info;
	struct shmid_ds ds;
	struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 16};
	int key, shmid, maxidx, id, r;
	bool enosys = false;
	void *p;
	mqd_t q;

	if (fs_read_file("/workspace/ipc-info", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%d %d %63s %63s", &key, &shmid, hmq, imq) != 4) {
		perror("reading ipc-info");
		return 1;
	}

	/* 1. list the segments: with nothing created inside yet, any one seen is the host's */
	maxidx = shmctl(0, SHM_INFO, (struct shmid_ds *) &info);
	if (maxidx < 0 && errno == ENOSYS)
		enosys = true;
	for (int idx = 0; maxidx >= 0 && idx <= maxidx; idx++) {
		int cmds[] = {SHM_STAT_ANY, SHM_STAT};

		for (int c = 0; c < 2; c++)
			if ((id = shmctl(idx, cmds[c], &ds)) >= 0) {
				snprintf(m, sizeof(m), "%s lists segment %d (key %#x)",
					 c ? "SHM_STAT" : "SHM_STAT_ANY", id,
					 (unsigned) ds.shm_perm.__key);
				fs_bad(m);
			}
	}

	/* 2. attach to the outside segment by its id, and look it up by key */
	p = shmat(shmid, NULL, 0);
	if (p != (void *) -1) {
		fs_bad(strncmp(p, MARKER, strlen(MARKER)) == 0 ? "shmat read the host segment"
							       : "shmat attached a host segment");
		memcpy(p, "overwritten", 11);
		(void) shmdt(p);
	}
	if (shmctl(shmid, IPC_STAT, &ds) == 0)
		fs_bad("IPC_STAT of the host segment");
	if (shmget(key, 0, 0) >= 0)
		fs_bad("shmget found the host segment by key");
	if (semget(key + 2, 0, 0) >= 0)
		fs_bad("semget found the host semaphore set by key");
	if (msgget(key + 3, 0) >= 0)
		fs_bad("msgget found the host message queue by key");

	/* 3. POSIX message queues by name */
	if (strcmp(hmq, "-") != 0) {
		q = mq_open(hmq, O_RDWR);
		if (q != (mqd_t) -1) {
			fs_bad("mq_open opened the host queue");
			(void) mq_close(q);
		}
		if (mq_unlink(hmq) == 0)
			fs_bad("mq_unlink removed the host queue");
	}

	/* 4. objects of our own, left behind on purpose: they must go with the run */
	id = shmget(key + 1, SEG_LEN, IPC_CREAT | 0600);
	if (id >= 0) {
		p = shmat(id, NULL, 0);
		if (p == (void *) -1) {
			perror("shmat of our own segment");
			return 1;
		}
		memset(p, 'x', SEG_LEN);
		(void) shmdt(p);
		if (enosys)
			fs_bad("SHM_INFO said ENOSYS, shmget worked");
	} else if (errno != ENOSYS) {
		perror("shmget of our own segment (want success or ENOSYS)");
		return 1;
	}
	q = mq_open(imq, O_CREAT | O_RDWR, 0600, &a);
	if (q != (mqd_t) -1) {
		r = mq_send(q, "x", 1, 0);
		if (r < 0)
			perror("mq_send");
	} else if (errno != ENOSYS && errno != EACCES) {
		/* EACCES: Landlock, which has no rule for the namespace's mqueue mount */
		perror("mq_open of our own queue (want success, ENOSYS or EACCES)");
		return 1;
	}
	fprintf(stderr, "IPC inside: %s\n", id >= 0 ? "a private namespace" : "denied (ENOSYS)");
	return 0;
}
