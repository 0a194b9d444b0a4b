/*
 * The workload channel's lock page: how the processes that share the
 * channel the agent gives its workload (PERFGATE_CTL_FD/PERFGATE_ACK_FD)
 * keep each command and its reply alone on it, without a system call.
 *
 * A channel is a pair of pipes that the workload's processes inherit, so
 * two of them may write commands at once and each read the other's reply.
 * A POSIX record lock on the ctl pipe prevents that, but costs two system
 * calls per command, a visible part of a round trip (bench/README.md,
 * client-lock).
 * The agent therefore also gives the workload one page of shared memory,
 * a sealed memfd whose fd PERFGATE_LOCK_FD names, holding a glibc mutex
 * that is process-shared (every process that maps the page uses the same
 * lock) and robust (a holder that dies hands it on with EOWNERDEAD instead
 * of blocking everyone).  Taking and giving back an uncontended mutex is
 * an atomic instruction each; only a waiter makes a futex call.
 *
 * Every client of a channel that has a page must take the page's mutex:
 * the page and the record lock do not exclude each other.  libperfgate
 * and the Python client do; a client that cannot map the page (the fd was
 * closed, or another libc) falls back to the record lock, and is then not
 * serialised with the others: perfgate-protocol(7) says so.
 *
 * The layout is fixed (the Python client maps it with ctypes):
 *   0   magic, "perfgate-lock-1" and a NUL
 *   16  the ctl pipe's inode, 24 the ack pipe's: the channel it guards, so a
 *       page inherited next to other pipes is not used
 *   32  sizeof(pthread_mutex_t) in the agent's libc; a client whose libc
 *       disagrees does not use the page
 *   36  replies owed on the channel (uint32, under the mutex): commands
 *       written whose reply nobody has read yet.  A client that timed out
 *       or died leaves its reply owed, and the next holder reads and drops
 *       it before its own, rather than take it for its own.
 *   40  retired (uint32): set to 1 when the agent stops serving the channel;
 *       a client that finds it set under the mutex looks for the page again
 *   44  the agent's pid (uint32), for messages
 *   64  the mutex
 *   128 the agent's own robust mutex, held while it lives (named pages
 *       only; clients never touch it): a page whose agent was killed has
 *       it "owner died"
 *
 * A channel given by path (--control fifo:CTL,ACK) is opened by clients
 * that inherit nothing from the agent, so its page has a name instead:
 * POSIX shared memory "/perfgate-lock.DEV.INO" (/dev/shm/perfgate-lock.DEV.INO),
 * DEV and INO those of the ctl FIFO, in decimal.  The agent makes it for a
 * private channel (the FIFOs are its user's, writable by nobody else; see
 * --control-shared) before it opens the ctl FIFO, so every client that can
 * connect finds it, and removes it when it stops serving the channel.  A
 * page an agent killed (SIGKILL, a crash) left behind is taken over by the
 * next agent on that FIFO, whose clients may still map it, and once a
 * minute old removed by any other agent of the same user that starts, so
 * none pile up.  A client uses a named page only if the ctl FIFO's owner
 * owns it, nobody else may read or write it, and the rest of this layout
 * matches; anything else it finds under the name was not made by the
 * agent, and the client keeps the record lock, as every client of a shared
 * channel does.
 *
 * Pure layout, no I/O: the agent creates the page (agent/control/channel_lock.c),
 * the clients map it.
 */
#ifndef PERFGATE_PROTO_CTL_LOCK_H
#define PERFGATE_PROTO_CTL_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define CTL_LOCK_MAGIC "perfgate-lock-1"
#define CTL_LOCK_ENV "PERFGATE_LOCK_FD"
#define CTL_LOCK_MUTEX_OFFSET 64
#define CTL_LOCK_ALIVE_OFFSET 128
#define CTL_LOCK_PAGE_SIZE 4096
/* The named page of a FIFO channel: its ctl FIFO's st_dev and st_ino. */
#define CTL_LOCK_NAME_FMT "/perfgate-lock.%llu.%llu"
#define CTL_LOCK_NAME_MAX 64

struct ctl_lock_page {
	char magic[16];
	uint64_t ctl_ino, ack_ino;
	uint32_t mutex_size;
	uint32_t owed;
	uint32_t retired;
	uint32_t agent_pid;
	uint8_t reserved[CTL_LOCK_MUTEX_OFFSET - 48];
	pthread_mutex_t mutex;
	uint8_t reserved2[CTL_LOCK_ALIVE_OFFSET - CTL_LOCK_MUTEX_OFFSET - sizeof(pthread_mutex_t)];
	pthread_mutex_t alive;
};

_Static_assert(sizeof(CTL_LOCK_MAGIC) <= 16, "the magic fits its field");
_Static_assert(offsetof(struct ctl_lock_page, mutex) == CTL_LOCK_MUTEX_OFFSET,
	       "the mutex sits where the clients look for it");
_Static_assert(offsetof(struct ctl_lock_page, alive) == CTL_LOCK_ALIVE_OFFSET,
	       "the agent's mutex sits after the clients' one");
_Static_assert(sizeof(struct ctl_lock_page) <= CTL_LOCK_PAGE_SIZE, "one page");

/* The name of the page of the FIFO channel whose ctl FIFO is ctl. */
static inline void ctl_lock_name(char name[CTL_LOCK_NAME_MAX], const struct stat *ctl)
{
	snprintf(name, CTL_LOCK_NAME_MAX, CTL_LOCK_NAME_FMT, (unsigned long long)ctl->st_dev,
		 (unsigned long long)ctl->st_ino);
}

/*
 * Is the mapped page a whole page of this layout, made by a libc whose
 * mutex is ours?  The agent writes the magic last, so the rest is read
 * only after it: a page still being made is not one yet.
 */
static inline bool ctl_lock_page_whole(const struct ctl_lock_page *page)
{
	if (memcmp(page->magic, CTL_LOCK_MAGIC, sizeof(CTL_LOCK_MAGIC)))
		return false;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return page->mutex_size == sizeof(pthread_mutex_t);
}

#endif
