/*
 * channel_lock: make the workload channel's lock page (proto/ctl_lock.h).
 *
 * The page is a memfd, sealed against growing and shrinking so that no
 * client can truncate it under the others (a mapped page that shrinks
 * raises SIGBUS in every process that touches it).  The agent itself never
 * takes the mutex: it only reads commands and writes replies.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/control/channel_lock.h"
#include "agent/base/log.h"
#include "proto/ctl_lock.h"

/* Process-shared (every process that maps the page uses the same lock) and
 * robust (a holder that dies hands it on with EOWNERDEAD). */
static int robust_mutex_init(pthread_mutex_t *mutex)
{
	pthread_mutexattr_t attr;
	int rc;

	if (pthread_mutexattr_init(&attr))
		return -1;
	rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) ||
	     pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) ||
	     pthread_mutex_init(mutex, &attr);
	pthread_mutexattr_destroy(&attr);
	return rc ? -1 : 0;
}

static int page_init(struct ctl_lock_page *page, const struct stat *ctl, const struct stat *ack)
{
	int rc;

	page->ctl_ino = ctl->st_ino;
	page->ack_ino = ack->st_ino;
	page->mutex_size = sizeof(pthread_mutex_t);
	page->agent_pid = (uint32_t)getpid();
	rc = robust_mutex_init(&page->mutex);
	/* The magic last: whoever sees it sees an initialised page. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(page->magic, CTL_LOCK_MAGIC, sizeof(CTL_LOCK_MAGIC));
	return rc;
}

int channel_lock_create(int ctl_fd, int ack_fd)
{
	struct stat ctl, ack;
	void *page;
	int fd, rc;

	if (fstat(ctl_fd, &ctl) || fstat(ack_fd, &ack))
		return -1;
	fd = memfd_create("perfgate-channel-lock", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, CTL_LOCK_PAGE_SIZE))
		goto fail;
	page = mmap(NULL, CTL_LOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED)
		goto fail;
	rc = page_init(page, &ctl, &ack);
	munmap(page, CTL_LOCK_PAGE_SIZE);
	if (rc || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/* ---- the named page of a FIFO channel ------------------------------------ */

#define SHM_DIR "/dev/shm"
#define NAME_PREFIX "perfgate-lock."

/* A named page of this user's in fd, mapped, whatever its channel; NULL
 * for anything else under such a name, or a page still being made. */
static struct ctl_lock_page *named_page_map(int fd)
{
	struct ctl_lock_page *page;
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size < CTL_LOCK_PAGE_SIZE)
		return NULL;
	page = mmap(NULL, CTL_LOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED)
		return NULL;
	if (ctl_lock_page_whole(page))
		return page;
	munmap(page, CTL_LOCK_PAGE_SIZE);
	return NULL;
}

/* The page is this channel's: what its clients check too (clients/c/perfgate.c). */
static bool named_page_is_for(const struct ctl_lock_page *page, const struct stat *ctl,
			      const struct stat *ack)
{
	return page->ctl_ino == ctl->st_ino && page->ack_ino == ack->st_ino;
}

/* Does name still lead to the file fd has open? */
static bool name_is(const char *name, int fd)
{
	char path[sizeof(SHM_DIR) + NAME_MAX + 2];
	struct stat by_name, by_fd;

	snprintf(path, sizeof(path), SHM_DIR "%s", name);
	return lstat(path, &by_name) == 0 && fstat(fd, &by_fd) == 0 &&
	       by_name.st_dev == by_fd.st_dev && by_name.st_ino == by_fd.st_ino;
}

/*
 * Remove the named pages of this user's agents that were killed before
 * they could remove their own (SIGKILL, a crash): nobody holds their
 * alive mutex any more.  A client that still maps one keeps it; it only
 * loses its name.  The name is removed while the mutex is held, so an
 * agent that takes the same page over at the same moment (see
 * named_page_take) sees it gone and makes a new one.  A page made in the
 * last SWEEP_AFTER_S seconds is left for a while: the agent that restarts
 * on its FIFO after a crash takes it over, with the clients that map it.
 */
#define SWEEP_AFTER_S 60

static void named_pages_sweep(const char *keep)
{
	DIR *dir = opendir(SHM_DIR);
	time_t now = time(NULL);
	struct dirent *e;

	while (dir && (e = readdir(dir))) {
		char name[sizeof(e->d_name) + 1];
		struct ctl_lock_page *page;
		struct stat st;
		int fd, rc;

		if (strncmp(e->d_name, NAME_PREFIX, strlen(NAME_PREFIX)))
			continue;
		snprintf(name, sizeof(name), "/%s", e->d_name);
		if (!strcmp(name, keep))
			continue;
		fd = shm_open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0)
			continue;
		page = fstat(fd, &st) == 0 && now - st.st_mtime >= SWEEP_AFTER_S ?
		       named_page_map(fd) : NULL;
		if (page) {
			rc = pthread_mutex_trylock(&page->alive);
			if (rc == EOWNERDEAD) {
				if (name_is(name, fd))
					shm_unlink(name);
				pthread_mutex_consistent(&page->alive);
			}
			if (rc == 0 || rc == EOWNERDEAD)
				pthread_mutex_unlock(&page->alive);
			munmap(page, CTL_LOCK_PAGE_SIZE);
		}
		close(fd);
	}
	if (dir)
		closedir(dir);
}

/*
 * Take over the page under this channel's name that an agent killed on it
 * left behind.  Its clients may still map it, so it is kept rather than
 * replaced (they would no longer exclude the new ones), and what the dead
 * agent owed is forgiven, under the clients' mutex: this agent will never
 * send those replies.
 *
 * Returns 1 with *out set, 0 when the caller should make a new page (the
 * file is no page of this channel, or it lost its name meanwhile, or a
 * client stopped while holding its mutex), or -1 when a live agent holds
 * it: another perfgate reads this FIFO.
 */
static int named_page_take(const char *name, int fd, const char *path, const struct stat *ctl,
			   const struct stat *ack, struct ctl_lock_page **out)
{
	struct ctl_lock_page *page = named_page_map(fd);
	struct timespec deadline;
	int rc;

	if (!page || !named_page_is_for(page, ctl, ack)) {
		if (page)
			munmap(page, CTL_LOCK_PAGE_SIZE);
		if (name_is(name, fd))
			shm_unlink(name);
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 1;
	rc = pthread_mutex_timedlock(&page->alive, &deadline);
	if (rc == ETIMEDOUT) {
		log_error("refusing control FIFO '%s': another perfgate (pid %u) reads it",
			  path, page->agent_pid);
		munmap(page, CTL_LOCK_PAGE_SIZE);
		return -1;
	}
	if (rc == EOWNERDEAD)
		rc = pthread_mutex_consistent(&page->alive);
	if (rc || !name_is(name, fd))
		goto drop;
	rc = pthread_mutex_timedlock(&page->mutex, &deadline);
	if (rc == EOWNERDEAD)
		rc = pthread_mutex_consistent(&page->mutex);
	if (rc) {
		shm_unlink(name);
		goto drop;
	}
	page->owed = 0;
	page->retired = 0;
	page->agent_pid = (uint32_t)getpid();
	pthread_mutex_unlock(&page->mutex);
	*out = page;
	return 1;
drop:
	pthread_mutex_unlock(&page->alive);
	munmap(page, CTL_LOCK_PAGE_SIZE);
	return 0;
}

/* A new page under name, its alive mutex held; NULL with errno set. */
static struct ctl_lock_page *named_page_create(const char *name, const struct stat *ctl,
					       const struct stat *ack)
{
	struct ctl_lock_page *page;
	int fd, err;

	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	page = fchmod(fd, 0600) || ftruncate(fd, CTL_LOCK_PAGE_SIZE) ? MAP_FAILED :
	       mmap(NULL, CTL_LOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	/* Held before the magic is written: a page that can be seen is
	 * either alive or dead, never free. */
	if (page != MAP_FAILED && robust_mutex_init(&page->alive) == 0 &&
	    pthread_mutex_lock(&page->alive) == 0) {
		if (page_init(page, ctl, ack) == 0)
			return page;
		pthread_mutex_unlock(&page->alive);
	}
	if (page != MAP_FAILED)
		munmap(page, CTL_LOCK_PAGE_SIZE);
	shm_unlink(name);
	errno = err ? err : EINVAL;
	return NULL;
}

int channel_lock_publish(const char *name, const char *path, const struct stat *ctl,
			 const struct stat *ack, struct ctl_lock_page **out)
{
	*out = NULL;
	named_pages_sweep(name);
	/* Each turn ends with a page, or because another agent made or
	 * removed one under the name at the same moment: try again. */
	for (int turn = 0; turn < 3; turn++) {
		int fd = shm_open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0), rc;

		if (fd >= 0) {
			rc = named_page_take(name, fd, path, ctl, ack, out);
			close(fd);
			if (rc)
				return rc < 0 ? -1 : 0;
			continue;
		}
		*out = named_page_create(name, ctl, ack);
		if (*out || errno != EEXIST)
			break;
	}
	if (!*out)
		log_warn("control FIFO '%s': cannot make its lock page " SHM_DIR "%s: %s; its "
			 "clients take a record lock instead", path, name, strerror(errno));
	return 0;
}

void channel_lock_withdraw(const char *name, struct ctl_lock_page *page)
{
	/* Unlinked first: a client that sees retired looks the name up again
	 * and must not find this page. */
	shm_unlink(name);
	__atomic_store_n(&page->retired, 1, __ATOMIC_RELEASE);
	/* Let go before unmapping: a robust mutex stays on this thread's list,
	 * which the kernel walks at exit. */
	pthread_mutex_unlock(&page->alive);
	munmap(page, CTL_LOCK_PAGE_SIZE);
}
