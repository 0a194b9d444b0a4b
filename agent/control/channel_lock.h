/*
 * channel_lock: the lock page of the workload's control channel
 * (proto/ctl_lock.h says what it is and why).
 */
#ifndef PERFGATE_CHANNEL_LOCK_H
#define PERFGATE_CHANNEL_LOCK_H

#include <sys/stat.h>

#include "proto/ctl_lock.h"

/*
 * A sealed memfd holding an initialised page for the channel whose
 * workload ends are ctl_fd and ack_fd; close-on-exec.  Returns -1 when it
 * cannot be made (no memfd): the clients then keep the record lock, so
 * this is not an error.
 */
int channel_lock_create(int ctl_fd, int ack_fd);

/*
 * Make (or take over from a killed agent) the named page of a private FIFO
 * channel, mapped, in *out; before the ctl FIFO is opened, so that no
 * client can connect without finding it.  Pages other killed agents of
 * this user left are removed on the way.  Returns -1, with the error
 * printed (path names the FIFO), when another live agent reads it;
 * otherwise 0, with *out NULL and a warning when no page could be made:
 * every client then takes the record lock.
 */
int channel_lock_publish(const char *name, const char *path, const struct stat *ctl,
			 const struct stat *ack, struct ctl_lock_page **out);
/* The channel is no longer served: remove the page and mark it retired. */
void channel_lock_withdraw(const char *name, struct ctl_lock_page *page);

#endif
