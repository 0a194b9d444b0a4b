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
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/channel_lock.h"
#include "proto/ctl_lock.h"

static int page_init(struct ctl_lock_page *page, const struct stat *ctl, const struct stat *ack)
{
	pthread_mutexattr_t attr;
	int rc;

	memcpy(page->magic, CTL_LOCK_MAGIC, sizeof(CTL_LOCK_MAGIC));
	page->ctl_ino = ctl->st_ino;
	page->ack_ino = ack->st_ino;
	page->mutex_size = sizeof(pthread_mutex_t);
	if (pthread_mutexattr_init(&attr))
		return -1;
	rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) ||
	     pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) ||
	     pthread_mutex_init(&page->mutex, &attr);
	pthread_mutexattr_destroy(&attr);
	return rc ? -1 : 0;
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
